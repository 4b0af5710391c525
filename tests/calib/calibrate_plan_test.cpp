// autoddl calibrate's plan: every program once, each NCCL program once per group size (2, 4,
// ..., n), so tensor-parallel groups get calibrated entries, not only the whole node.
#include <catch2/catch.hpp>

#include <set>
#include <tuple>

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

TEST_CASE("the world is read from srun and mpirun command lines", "[calib][plan]") {
  std::string why;
  auto w = parse_launcher("srun -N4 --ntasks-per-node=8 --gpus-per-task=1", why);
  REQUIRE(w);
  CHECK((w->nodes == 4 && w->gpus_per_node == 8));
  w = parse_launcher("/usr/bin/srun --nodes 2 -n 16", why);
  REQUIRE(w);
  CHECK((w->nodes == 2 && w->gpus_per_node == 8));
  w = parse_launcher("mpirun -np 32 -N 8 -x NCCL_DEBUG=WARN", why);
  REQUIRE(w);
  CHECK((w->nodes == 4 && w->gpus_per_node == 8));
  w = parse_launcher("mpiexec -n 16 --map-by ppr:8:node:pe=4", why);
  REQUIRE(w);
  CHECK((w->nodes == 2 && w->gpus_per_node == 8));
  CHECK_FALSE(parse_launcher("mpirun -np 32", why));
  CHECK(why.find("per-node count") != std::string::npos);
  CHECK_FALSE(parse_launcher("ssh node1", why));
  CHECK_FALSE(parse_launcher("srun -N4 --ntasks-per-node=8 -n 30", why));
}

TEST_CASE("a 4 x 8 world measures the shapes a mesh needs, NCCL runs once per shape", "[calib][plan]") {
  std::vector<std::tuple<int, int, int>> got;
  for (const GroupShape& g : mesh_group_shapes({4, 8})) got.emplace_back(g.ranks, g.ranks_per_node, g.groups_per_node);
  const std::vector<std::tuple<int, int, int>> want = {{2, 2, 1}, {4, 4, 1}, {8, 8, 1}, {2, 1, 1}, {2, 1, 8},
                                                       {4, 1, 1}, {4, 1, 8}, {16, 8, 1}, {32, 8, 1}};
  CHECK(got == want);
  const std::vector<PlannedRun> plan = launcher_plan({4, 8}, false, {"gemm_cublaslt", "nccl_all_reduce"});
  REQUIRE(plan.size() == 1 + 1 + 9);
  CHECK(plan[0].program == std::string("gpu_info"));
  CHECK(plan[1].stem == "gemm_cublaslt");
  CHECK(plan[8].stem == "nccl_all_reduce_g4_pn1_c8");
  CHECK(plan[8].args == std::vector<std::string>{"--group-ranks", "4", "--ranks-per-node", "1", "--groups-per-node", "8"});
  CHECK(mesh_group_shapes({1, 1}).size() == 1);
}
