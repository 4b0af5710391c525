// costmodel::Calibration: JSON round trip, strict loading, and the collective / efficiency
// lookups the cost model calls (interpolation in log-size, fallback for unknown groups).
#include <cmath>
#include <cstdio>
#include <filesystem>

#include <catch2/catch.hpp>

#include "autoddl/costmodel/calibration.hpp"
#include "autoddl/costmodel/error.hpp"

using namespace autoddl::costmodel;
using autoddl::InputError;

namespace {

Calibration sample() {
  Calibration c;
  c.provenance = {"NVIDIA H200", "2025-01-02T03:04:05Z", "autoddl fit --nccl-tests ar.txt",
                  {"ar.txt", "gemm.json"}};
  c.memory = {4.1e12, 2.5e-6};
  CollectiveCalibration ar;
  ar.kind = CollectiveKind::all_reduce;
  ar.group = {8, 8};
  ar.source = "ar.txt";
  FitQuality q{14, 0.9987, 0.031, 0.012, 0.017};
  ar.bands = {{0, 12e-6, 1 / 1e9, q}, {98304, 20e-6, 1 / 40e9, std::nullopt}};
  ar.measured = {{1024, 10e-6}, {1 << 20, 100e-6}, {1 << 30, 5.5e-3}};
  c.collectives.push_back(ar);
  CollectiveCalibration ag;
  ag.kind = CollectiveKind::all_gather;
  ag.group = {16, 8};
  ag.source = "ag.txt";
  ag.measured = {{4096, 30e-6}, {8192, 40e-6}};
  c.collectives.push_back(ag);
  EfficiencyCalibration e;
  e.op = "matmul";
  e.dtype = DType::bf16;
  e.peak_flops_per_s = 989e12;
  e.peak_source = "--peak";
  e.points = {{1e9, 0.3}, {1e11, 0.7}, {1e13, 0.8}};
  e.shapes = 343;
  e.holdout_mape = 0.021;
  c.efficiency.push_back(e);
  return c;
}

std::string load_error(const nlohmann::json& j) {
  try {
    calibration_from_json(j, "cal.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("the calibration JSON round-trips through save and load", "[calib][calibration]") {
  Calibration c = sample();
  nlohmann::json j = calibration_to_json(c);
  Calibration back = calibration_from_json(j, "mem");
  CHECK(calibration_to_json(back) == j);

  auto path = std::filesystem::temp_directory_path() / "autoddl_calibration_roundtrip.json";
  save_calibration_file(path.string(), c);
  Calibration loaded = load_calibration_file(path.string());
  std::filesystem::remove(path);
  CHECK(calibration_to_json(loaded) == j);
  REQUIRE(loaded.collectives.size() == 2);
  CHECK(loaded.collectives[0].bands[0].fit->holdout_rel_error == 0.017);
  CHECK_FALSE(loaded.collectives[0].bands[1].fit.has_value());
  CHECK(loaded.collectives[1].group.ranks_per_node == 8);
  CHECK(loaded.efficiency[0].dtype == DType::bf16);
  CHECK(loaded.memory.hbm_bytes_per_s == 4.1e12);
  CHECK(loaded.provenance.inputs[1] == "gemm.json");
}

TEST_CASE("unknown keys are rejected with their field path", "[calib][calibration]") {
  nlohmann::json j = calibration_to_json(sample());
  j["collectives"][0]["bands"][1]["alpha_us"] = 3;
  CHECK(load_error(j) == "cal.json: collectives[0].bands[1].alpha_us: unknown key");
  j = calibration_to_json(sample());
  j["extra"] = 1;
  CHECK(load_error(j) == "cal.json: extra: unknown key");
}

TEST_CASE("missing fields are rejected with their field path", "[calib][calibration]") {
  nlohmann::json j = calibration_to_json(sample());
  j["collectives"][1].erase("ranks_per_node");
  CHECK(load_error(j) == "cal.json: collectives[1].ranks_per_node: missing");
  j = calibration_to_json(sample());
  j["memory"].erase("hbm_bytes_per_s");
  CHECK(load_error(j) == "cal.json: memory.hbm_bytes_per_s: missing");
}

TEST_CASE("out-of-range and inconsistent values are rejected", "[calib][calibration]") {
  nlohmann::json j = calibration_to_json(sample());
  j["collectives"][0]["ranks_per_node"] = 9;
  CHECK(load_error(j) == "cal.json: collectives[0].ranks_per_node: out of range [1, 8]: 9");
  j = calibration_to_json(sample());
  j["collectives"][0]["measured"][2][0] = 512;
  CHECK(load_error(j) == "cal.json: collectives[0].measured[2]: bytes must be strictly increasing");
  j = calibration_to_json(sample());
  j["collectives"][0]["bands"][0]["from_bytes"] = 8;
  CHECK(load_error(j) == "cal.json: collectives[0].bands[0].from_bytes: the first band must start at 0");
  j = calibration_to_json(sample());
  j["efficiency"][0]["points"][1][1] = 1.3;
  CHECK(load_error(j) == "cal.json: efficiency[0].points[1]: efficiency must be in (0, 1]");
  j = calibration_to_json(sample());
  j["collectives"][0]["kind"] = "broadcast";
  CHECK(load_error(j) == "cal.json: collectives[0].kind: unknown collective 'broadcast'");
  j = calibration_to_json(sample());
  j["collectives"].push_back(j["collectives"][0]);
  CHECK(load_error(j) == "cal.json: collectives[2]: duplicate entry for all_reduce over 8 ranks, 8 per node");
  j = calibration_to_json(sample());
  j["format"] = "autoddl-calibration/0";
  CHECK(load_error(j) == "cal.json: format: expected \"autoddl-calibration/1\", got \"autoddl-calibration/0\"");
}

TEST_CASE("100,000 copies of one calibration entry are refused at the first copy, as the parser reaches it",
          "[calib][calibration]") {
  // The sample's fields, then 100,000 copies of one collective entry, and no closing brackets:
  // the loader must stop at collectives[1] while parsing. Parsing the whole file first (seconds
  // for such a file) would report its truncated end as malformed JSON instead.
  nlohmann::json j = calibration_to_json(sample());
  const std::string entry = j["collectives"][1].dump();
  j.erase("collectives");
  std::string text = j.dump();
  text.pop_back();  // the closing '}'
  text += ", \"collectives\": [";
  for (int i = 0; i < 100000; ++i) text += (i ? "," : "") + entry;
  const std::string path = (std::filesystem::temp_directory_path() / "autoddl_calibration_copies.json").string();
  FILE* f = std::fopen(path.c_str(), "w");
  REQUIRE(f);
  std::fputs(text.c_str(), f);
  std::fclose(f);
  CHECK_THROWS_WITH(load_calibration_file(path),
                    path + ": collectives[1]: duplicate entry for all_gather over 16 ranks, 8 per node");
  std::remove(path.c_str());
}

TEST_CASE("a calibration file that is not JSON names the file", "[calib][calibration]") {
  auto path = std::filesystem::temp_directory_path() / "autoddl_calibration_bad.json";
  FILE* f = std::fopen(path.c_str(), "w");
  std::fputs("{\"format\": \n", f);
  std::fclose(f);
  try {
    load_calibration_file(path.string());
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(e.file() == path.string());
  }
  std::filesystem::remove(path);
}

TEST_CASE("collective lookup interpolates the measured table in log-size",
          "[calib][calibration]") {
  Calibration c = sample();
  CommGroup g{8, 8};
  // Exact at measured sizes.
  CHECK(c.collective_time_s(CollectiveKind::all_reduce, g, 1024) == Approx(10e-6));
  CHECK(c.collective_time_s(CollectiveKind::all_reduce, g, 1 << 20) == Approx(100e-6));
  // 32 KiB is halfway between 1 KiB and 1 MiB in log-size: the geometric mean of the times.
  CHECK(c.collective_time_s(CollectiveKind::all_reduce, g, 32768) ==
        Approx(std::sqrt(10e-6 * 100e-6)).epsilon(1e-12));
  // Monotone between points.
  double a = c.collective_time_s(CollectiveKind::all_reduce, g, 1 << 22);
  double b = c.collective_time_s(CollectiveKind::all_reduce, g, 1 << 24);
  CHECK(a > 100e-6);
  CHECK(b > a);
  CHECK(b < 5.5e-3);
}

TEST_CASE("outside the measured range the bands' alpha-beta applies", "[calib][calibration]") {
  Calibration c = sample();
  CommGroup g{8, 8};
  CHECK(c.collective_time_s(CollectiveKind::all_reduce, g, 8.0 * (1 << 30)) ==
        Approx(20e-6 + 8.0 * (1 << 30) / 40e9));
  CHECK(c.collective_time_s(CollectiveKind::all_reduce, g, 8) == Approx(12e-6 + 8 / 1e9));
  CHECK(c.collective_time_s(CollectiveKind::all_reduce, g, 0) == 0);
}

TEST_CASE("without bands the table is extrapolated: flat below, last slope above",
          "[calib][calibration]") {
  Calibration c = sample();
  CommGroup g{16, 8};
  CHECK(c.collective_time_s(CollectiveKind::all_gather, g, 8) == Approx(30e-6));
  // slope 10 us per 4096 B
  CHECK(c.collective_time_s(CollectiveKind::all_gather, g, 16384) == Approx(60e-6));
}

TEST_CASE("collective lookup returns a negative time for groups it has nothing for",
          "[calib][calibration]") {
  Calibration c = sample();
  CHECK(c.collective_time_s(CollectiveKind::all_reduce, {8, 4}, 1024) < 0);
  CHECK(c.collective_time_s(CollectiveKind::all_reduce, {4, 4}, 1024) < 0);
  CHECK(c.collective_time_s(CollectiveKind::reduce_scatter, {8, 8}, 1024) < 0);
  CHECK(Calibration{}.collective_time_s(CollectiveKind::all_reduce, {1, 1}, 1024) < 0);
}

TEST_CASE("kernel efficiency interpolates its table and is negative when uncalibrated",
          "[calib][calibration]") {
  Calibration c = sample();
  CHECK(c.kernel_efficiency("matmul", DType::bf16, 1e10) == Approx(0.5));
  CHECK(c.kernel_efficiency("matmul", DType::bf16, 1e15) == Approx(0.8));
  CHECK(c.kernel_efficiency("matmul", DType::fp16, 1e10) < 0);
  CHECK(c.kernel_efficiency("conv", DType::bf16, 1e10) < 0);
}
