// The GPU microbenchmarks' result files (autoddl-measurements/1): strict loading.
#include <catch2/catch.hpp>

#include "autoddl/calib/measurements.hpp"
#include "autoddl/costmodel/error.hpp"

using namespace autoddl::calib;
using nlohmann::json;

namespace {

json row(const std::string& name, double bytes, double time_us) {
  return {{"name", name},        {"size_bytes", bytes}, {"count", bytes / 4},
          {"dtype", "fp32"},     {"ranks", 8},          {"ranks_per_node", 8},
          {"time_us", time_us},  {"kernel_us", nullptr}, {"algbw_GBps", 0},
          {"busbw_GBps", 0},     {"flops", 0},          {"tflops", 0},
          {"wrong", 0},          {"shape", json::object()}, {"skipped", nullptr}};
}

json file(json rows) {
  return {{"format", "autoddl-measurements/1"},
          {"benchmark", "nccl_all_reduce"},
          {"provenance",
           {{"device", "NVIDIA H200"},
            {"date", "2025-01-01T00:00:00Z"},
            {"command", "nccl_all_reduce --json out.json"},
            {"host", "gpu-1"},
            {"versions", {{"nccl", "2.28.9"}}}}},
          {"rows", rows}};
}

std::string load_error(const json& j) {
  try {
    measurements_from_json(j, "m.json");
  } catch (const autoddl::InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("a measurement file loads its provenance, rows and skipped rows", "[calib][measurements]") {
  json skipped = row("all_reduce", 0, 0);
  skipped["skipped"] = "peer access unavailable between GPU 0 and GPU 3";
  json kernel = row("gemm", 3 * 2 * 4096.0 * 4096, 180);
  kernel["kernel_us"] = 171.5;
  kernel["wrong"] = nullptr;
  kernel["shape"] = {{"m", 4096}, {"n", 4096}, {"k", 4096}};
  MeasurementFile m = measurements_from_json(file({row("all_reduce", 1 << 20, 25.5), skipped, kernel}), "m.json");
  CHECK(m.benchmark == "nccl_all_reduce");
  CHECK(m.device == "NVIDIA H200");
  CHECK(m.versions["nccl"] == "2.28.9");
  REQUIRE(m.rows.size() == 3);
  CHECK(m.rows[0].time_us == 25.5);
  CHECK(m.rows[0].wrong == 0);
  CHECK_FALSE(m.rows[0].kernel_us);
  CHECK(m.rows[1].skipped == "peer access unavailable between GPU 0 and GPU 3");
  CHECK(m.rows[2].kernel_us == 171.5);
  CHECK_FALSE(m.rows[2].wrong);
  CHECK(m.rows[2].shape["k"] == 4096);
}

TEST_CASE("measurement rows with unknown or missing columns are rejected by path",
          "[calib][measurements]") {
  json r = row("all_reduce", 1024, 10);
  r["latency"] = 3;
  CHECK(load_error(file({row("all_reduce", 8, 9), r})) == "m.json: rows[1].latency: unknown key");
  r = row("all_reduce", 1024, 10);
  r.erase("time_us");
  CHECK(load_error(file({r})) == "m.json: rows[0].time_us: missing");
  json f = file({});
  f["provenance"].erase("host");
  CHECK(load_error(f) == "m.json: provenance.host: missing");
}

TEST_CASE("a measured row needs a positive time", "[calib][measurements]") {
  CHECK(load_error(file({row("all_reduce", 1024, 0)})) ==
        "m.json: rows[0].time_us: must be positive in a row that was measured");
}

TEST_CASE("fit takes a calibrate folder as written: files of another format are skipped with the reason",
          "[calib][measurements]") {
  // What `autoddl calibrate --out DIR` leaves beside the measurements (issue 16, defect 1).
  const std::string dir = std::string(AUTODDL_SOURCE_DIR) + "/tests/cli/data/calibrate_out/";
  std::string why;
  CHECK_FALSE(autoddl::calib::load_measurement_file_if_any(dir + "gpu_info.json", why));
  CHECK(why.find("not a measurement file") != std::string::npos);
  why.clear();
  CHECK_FALSE(autoddl::calib::load_measurement_file_if_any(dir + "trace_gemm.json", why));
  CHECK_FALSE(why.empty());
  const auto m = autoddl::calib::load_measurement_file_if_any(dir + "gemm_cublaslt.json", why);
  REQUIRE(m);
  CHECK(m->benchmark == "gemm_cublaslt");
  // A file that claims the format but is malformed is still an error, not a skip.
  CHECK_THROWS_AS(autoddl::calib::load_measurement_file_if_any(
                      std::string(AUTODDL_SOURCE_DIR) + "/tests/fuzz/regressions/measurement/ranks_2_32.json", why),
                  autoddl::InputError);
}

TEST_CASE("groups_per_node is an optional row key, 1 when absent", "[calib][measurements]") {
  json shared = row("all_reduce", 1 << 20, 80);
  shared["groups_per_node"] = 8;
  MeasurementFile m = measurements_from_json(file({row("all_reduce", 1 << 20, 25.5), shared}), "m.json");
  CHECK(m.rows[0].groups_per_node == 1);
  CHECK(m.rows[1].groups_per_node == 8);
  shared["groups_per_node"] = 0;
  CHECK(load_error(file({shared})) == "m.json: rows[0].groups_per_node: expected an integer in [1, 2^24]");
}

TEST_CASE("NCCL's algorithm, protocol and run info round-trip through the measurement JSON",
          "[calib][measurements]") {
  json logged = row("all_reduce", 1 << 20, 25.5);
  logged["nccl_algo"] = "nvls";
  logged["nccl_proto"] = "Simple";
  logged["nccl_channels"] = 16;
  json no_channels = row("all_reduce", 1 << 10, 9.5);
  no_channels["nccl_algo"] = "ring";
  no_channels["nccl_proto"] = "LL";
  json j = file({logged, no_channels, row("all_reduce", 1 << 12, 10)});
  j["rows"][2]["groups_per_node"] = 2;
  j["nccl"] = {{"version", "2.30.7+cuda13.0"},
               {"env", {{"NCCL_IB_HCA", "mlx5"}}},
               {"communicators", {{{"ranks", 8}, {"nodes", 1}, {"local_ranks", 8}}}},
               {"coll_channels", 32},
               {"nvls_channels", 16},
               {"logs", {"out/nccl_all_reduce_g8.nccl.h.1.log"}}};
  const MeasurementFile m = measurements_from_json(j, "m.json");
  CHECK(m.rows[0].nccl == NcclChoice{"nvls", "Simple", 16});
  CHECK(m.rows[1].nccl == NcclChoice{"ring", "LL", 0});
  CHECK_FALSE(m.rows[2].nccl);
  REQUIRE(m.nccl);
  CHECK(m.nccl->comms == std::vector<NcclCommRecord>{{8, 1, 8}});
  CHECK(m.nccl->env.at("NCCL_IB_HCA") == "mlx5");
  // Written back, it is the same JSON, and loads to the same file.
  const json back = measurements_to_json(m);
  CHECK(back == j);
  const MeasurementFile again = measurements_from_json(back, "m.json");
  CHECK(again.rows[0].nccl == m.rows[0].nccl);
  CHECK(again.nccl == m.nccl);
}

TEST_CASE("a file without NCCL fields still loads, and bad NCCL fields name their path", "[calib][measurements]") {
  const MeasurementFile old = measurements_from_json(file({row("all_reduce", 1 << 20, 25.5)}), "m.json");
  CHECK_FALSE(old.rows[0].nccl);
  CHECK_FALSE(old.nccl);
  json bad_algo = row("all_reduce", 1 << 20, 25.5);
  bad_algo["nccl_algo"] = "warp";
  bad_algo["nccl_proto"] = "LL";
  CHECK(load_error(file({bad_algo})).rfind("m.json: rows[0].nccl_algo: unknown NCCL algorithm 'warp'", 0) == 0);
  json half = row("all_reduce", 1 << 20, 25.5);
  half["nccl_algo"] = "ring";
  CHECK(load_error(file({half})) == "m.json: rows[0].nccl_proto: missing (nccl_algo and nccl_proto come together)");
  json bad_proto = row("all_reduce", 1 << 20, 25.5);
  bad_proto["nccl_algo"] = "ring";
  bad_proto["nccl_proto"] = "SIMPLE";  // NCCL's spelling; the file uses costmodel's "Simple"
  CHECK(load_error(file({bad_proto})) == "m.json: rows[0].nccl_proto: unknown NCCL protocol 'SIMPLE' (LL, LL128, Simple)");
  json extra = file({row("all_reduce", 1 << 20, 25.5)});
  extra["nccl"] = {{"version", "2.30.7"}};
  CHECK(load_error(extra) == "m.json: nccl.env: missing");
}
