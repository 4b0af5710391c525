// Pins how a calibration file changes the analytical model: a cluster JSON that references one
// gets the measured all-reduce times (not α-β) on mesh dims measured alone, the measured GEMM
// efficiency and HBM bandwidth; everything else stays the preset's.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "autoddl/costmodel/calibration.hpp"
#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/mesh.hpp"
#include "autoddl/costmodel/zoo.hpp"

using namespace autoddl::costmodel;
namespace fs = std::filesystem;

namespace {

// A calibration measuring the 8-GPU all-reduce, reduce-scatter and all-gather of one dgx-a100
// node 3x slower than the preset's α-β model, and matmuls at a flat 1% of the fp32 peak.
Calibration slow_node(const ClusterSpec& preset) {
  Calibration cal;
  cal.provenance = {"synthetic test device", "2026-11-21", "calibration_cost_test", {}};
  const DeviceMesh mesh = make_mesh(preset, {8});
  for (CollectiveKind k : {CollectiveKind::all_reduce, CollectiveKind::reduce_scatter, CollectiveKind::all_gather}) {
    CollectiveCalibration m;
    m.kind = k;
    m.group = CommGroup{8, 8};
    m.source = "synthetic";
    for (double b = 8; b <= 16e9; b *= 2) m.measured.push_back({b, 3 * mesh.collective_time_s(0, k, b)});
    cal.collectives.push_back(m);
  }
  EfficiencyCalibration eff;
  eff.op = "matmul";
  eff.dtype = DType::fp32;
  eff.peak_flops_per_s = preset.gpu.peak_flops(DType::fp32);
  eff.peak_source = "preset";
  eff.points = {{1e6, 0.01}, {1e12, 0.01}};
  eff.shapes = 2;
  cal.efficiency.push_back(eff);
  return cal;
}

}  // namespace

TEST_CASE("a cluster's calibration file replaces α-β and efficiency where it measured them",
          "[costmodel][calibration]") {
  // Without its nccl block the preset prices collectives with the α-β model that slow_node's
  // measured table multiplies, so "3x the model" holds on both paths below.
  ClusterSpec preset = resolve_cluster("dgx-a100", 1);
  preset.nccl.reset();
  const fs::path dir = fs::temp_directory_path() / ("autoddl_cal_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  save_calibration_file((dir / "cal.json").string(), slow_node(preset));
  nlohmann::json cj = cluster_to_json(preset);
  cj["calibration_file"] = "cal.json";  // relative to the cluster file
  autoddl::write_json_atomic((dir / "cluster.json").string(), cj);

  const ClusterSpec cal = resolve_cluster((dir / "cluster.json").string());
  REQUIRE(cal.calibration != nullptr);
  CHECK(cal.sources.at("gpu.matmul_efficiency") == "calibrated: cal.json");
  CHECK(interpolate_efficiency(cal.gpu.matmul_efficiency, 1e9) == Approx(0.01));

  // nccl-tests-style query: the measured table, marked as such.
  CollectiveEstimate e = collective_time(cal, CollectiveKind::all_reduce, CommGroup{8, 8}, 1 << 26);
  CHECK(e.algo == CollectiveAlgo::calibrated);
  CHECK(e.time_s == Approx(3 * collective_time(preset, CollectiveKind::all_reduce, CommGroup{8, 8}, 1 << 26).time_s).epsilon(0.02));
  // Unmeasured collectives keep the α-β model.
  CHECK(collective_time(cal, CollectiveKind::all_to_all, CommGroup{8, 8}, 1 << 26).algo != CollectiveAlgo::calibrated);

  // Data parallel on the node: the gradient all-reduce takes 3x as long, the rest of
  // communication is unchanged, and matmuls slow down to the measured efficiency.
  Graph g = build_zoo_model("mlp", {{"batch", "64"}});
  CostReport before = evaluate(g, preset, make_scheme("dp", g, preset, {8}));
  CostReport after = evaluate(g, cal, make_scheme("dp", g, cal, {8}));
  auto ar = static_cast<size_t>(CollectiveKind::all_reduce);
  CHECK(after.comm.time_s[ar] == Approx(3 * before.comm.time_s[ar]).epsilon(0.02));
  CHECK(after.comm.bytes[ar] == Approx(before.comm.bytes[ar]));
  CHECK(after.compute_s > before.compute_s);
  fs::remove_all(dir);
}

TEST_CASE("a missing or malformed calibration file is an input error naming it", "[costmodel][calibration]") {
  const fs::path dir = fs::temp_directory_path() / ("autoddl_cal_bad_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  nlohmann::json cj = cluster_to_json(resolve_cluster("dgx-a100", 1));
  cj["calibration_file"] = "missing.json";
  autoddl::write_json_atomic((dir / "cluster.json").string(), cj);
  CHECK_THROWS_WITH(resolve_cluster((dir / "cluster.json").string()), Catch::Contains("missing.json"));
  fs::remove_all(dir);
}
