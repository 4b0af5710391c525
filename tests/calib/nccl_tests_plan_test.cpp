// `calibrate --plan-for` (issue 34 item 4): nccl-tests commands whose groups have the plan's shape
// and concurrency, and the loop closed: the log of such a split run, parsed and fitted, is what
// the cost model then finds as measured for that mesh dim.
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "autoddl/calib/fit.hpp"
#include "autoddl/calib/nccl_tests_parser.hpp"
#include "autoddl/calib/nccl_tests_plan.hpp"
#include "autoddl/costmodel/calibration_coverage.hpp"
#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/zoo.hpp"

using namespace autoddl;
using namespace autoddl::costmodel;

namespace {

std::vector<CollectiveNeed> needs_of(const ClusterSpec& c, const std::string& spec) {
  static const Graph g = build_zoo_model("gpt", parse_knob_list("layers=2,hidden=1024,heads=16,seq=1024,batch=16"));
  const Scheme s = make_scheme(spec, g, c, {});
  IterationPlan plan;
  evaluate(g, c, s, &plan);
  return collectives_needed(plan);
}

// An all_reduce_perf log of 16 ranks on two hosts split by NCCL_TESTS_SPLIT="MOD 8": 8 groups of
// 2 ranks, one on each host. Times follow 20 us + S / 20 GB/s.
std::string split_log() {
  std::string log = "# nThread 1 nGpus 1 minBytes 8 maxBytes 4294967296 step: 2(factor) warmup iters: 5 iters: 20\n";
  log += "# Using devices\n";
  for (int r = 0; r < 16; ++r) {
    char line[160];
    std::snprintf(line, sizeof line, "#  Rank %2d Group %2d Pid %6d on %10s device %2d [0x18] NVIDIA H100 80GB HBM3\n",
                  r, r % 8, 1000 + r, r < 8 ? "node01" : "node02", r % 8);
    log += line;
  }
  log += "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   "
         "busbw  #wrong\n";
  for (double s = 8; s <= 4294967296.0; s *= 2) {
    const double t_us = 20 + s / 20e9 * 1e6;
    const double algbw = s / (t_us * 1e-6) / 1e9;  // busbw = algbw for 2 ranks
    char row[200];
    std::snprintf(row, sizeof row, "%12.0f %12.0f     float     sum      -1 %8.2f %7.2f %7.2f       0 %8.2f %7.2f %7.2f       0\n",
                  s, s / 4, t_us, algbw, algbw, t_us, algbw, algbw);
    log += row;
  }
  return log;
}

}  // namespace

TEST_CASE("plan-for: a cross-node dim runs one block of stride x size ranks split MOD stride",
          "[calib][coverage]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 2);
  const auto cmds = calib::nccl_tests_commands(needs_of(c, "megatron:tp=8,pp=1,dp=2"), c.gpus_per_node);
  REQUIRE(cmds.size() >= 2);
  const calib::NcclTestsCommand& dp = cmds.front();  // mesh dim 0 comes first
  CHECK(dp.program == "all_reduce_perf");
  CHECK(dp.ranks == 16);
  CHECK(dp.ranks_per_node == 8);
  CHECK(dp.env == "NCCL_TESTS_SPLIT=MOD 8");
  CHECK(dp.command.find("mpirun -np 16 -N 8 -x \"NCCL_TESTS_SPLIT=MOD 8\" all_reduce_perf") == 0);
  // -b and -e are powers of two around the plan's sizes.
  CHECK((dp.min_bytes & (dp.min_bytes - 1)) == 0);
  CHECK((dp.max_bytes & (dp.max_bytes - 1)) == 0);
  CHECK(dp.min_bytes < dp.max_bytes);
  // tp inside a node: one group of 8, no split.
  const calib::NcclTestsCommand& tp = cmds.back();
  CHECK(tp.ranks == 8);
  CHECK(tp.env.empty());
}

TEST_CASE("plan-for: stage sends get no command (no calibration prices them)", "[calib][coverage]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 2);
  for (const calib::NcclTestsCommand& cmd : calib::nccl_tests_commands(needs_of(c, "megatron:tp=8,pp=2,dp=1"), 8))
    CHECK(cmd.program != "sendrecv_perf");
}

TEST_CASE("a split nccl-tests log is filed with its groups per node so the plan's dim is measured",
          "[calib][coverage]") {
  const auto runs = calib::parse_nccl_tests(split_log(), "all_reduce_perf_split.txt");
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].group.ranks == 2);
  CHECK(runs[0].group.ranks_per_node == 1);
  CHECK(runs[0].groups_per_node == 8);

  const calib::FitResult fit = calib::fit_calibration(runs, {}, {});
  ClusterSpec c = resolve_cluster("dgx-h100", 2);
  attach_calibration(c, std::make_shared<const Calibration>(fit.calibration), "split.json");
  const auto needs = needs_of(c, "megatron:tp=8,pp=1,dp=2");
  bool dp_seen = false;
  for (const CollectiveNeed& n : needs) {
    if (n.mesh_dim != 0 || n.kind != CollectiveKind::all_reduce) continue;
    dp_seen = true;
    CHECK(n.source == CoverageSource::measured);
  }
  CHECK(dp_seen);
}
