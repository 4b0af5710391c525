// autoddl calibrate's plan: every program once, each NCCL program once per group size (2, 4,
// ..., n), so tensor-parallel groups get calibrated entries, not only the whole node.
#include <catch2/catch.hpp>

#include <set>

#include "autoddl/calib/calibrate_plan.hpp"

using namespace autoddl::calib;

TEST_CASE("NCCL group sizes are the powers of two below the node's GPUs and the node itself", "[calib][plan]") {
  CHECK(nccl_group_sizes(8) == std::vector<int>{2, 4, 8});
  CHECK(nccl_group_sizes(6) == std::vector<int>{2, 4, 6});
  CHECK(nccl_group_sizes(2) == std::vector<int>{2});
  CHECK(nccl_group_sizes(1) == std::vector<int>{1});
}

TEST_CASE("the plan runs each NCCL program per group size with -g and distinct output stems", "[calib][plan]") {
  const std::vector<PlannedRun> plan = calibration_plan(8, /*quick=*/true, {});
  std::set<std::string> stems;
  int all_reduce = 0;
  for (const PlannedRun& r : plan) {
    CHECK(stems.insert(r.stem).second);
    CHECK(r.args.back() == "--quick");
    if (r.program == std::string("nccl_all_reduce")) {
      ++all_reduce;
      REQUIRE(r.args.size() == 3);
      CHECK(r.args[0] == "-g");
      CHECK(r.stem == "nccl_all_reduce_g" + r.args[1]);
    }
  }
  CHECK(all_reduce == 3);
  CHECK(plan.size() == 3 + 5 * 3);  // hbm, gemm, conv once; 5 NCCL programs x {2, 4, 8}
  const std::vector<PlannedRun> only = calibration_plan(4, false, {"gemm_cublaslt", "nccl_all_gather"});
  REQUIRE(only.size() == 1 + 2);
  CHECK(only[0].stem == "gemm_cublaslt");
  CHECK(only[0].args.empty());
  CHECK(only[2].stem == "nccl_all_gather_g4");
}
