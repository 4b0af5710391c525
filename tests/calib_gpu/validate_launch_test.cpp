// validate_runner under a launcher (issue 16, multi-node item 1): when it is one rank of an
// mpirun / srun job, and how the plan's groups become ncclCommSplit rounds.
#include <catch2/catch.hpp>

#include <map>

#include "validate_launch.hpp"

using namespace autoddl::calib::gpu;

namespace {
EnvLookup env_of(std::map<std::string, std::string> vars) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [shared](const char* name) -> const char* {
    auto it = shared->find(name);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}
}  // namespace

TEST_CASE("validate_runner goes MPI when a launcher started several processes, or when told",
          "[calib][validate]") {
  CHECK(launcher_world_size(env_of({})) == 0);
  CHECK(launcher_world_size(env_of({{"OMPI_COMM_WORLD_SIZE", "16"}})) == 16);
  CHECK(launcher_world_size(env_of({{"PMI_SIZE", "4"}})) == 4);
  CHECK(launcher_world_size(env_of({{"SLURM_STEP_NUM_TASKS", "8"}})) == 8);
  CHECK(launcher_world_size(env_of({{"SLURM_NTASKS", "8"}})) == 0);  // an sbatch script, no srun step
  CHECK(launcher_world_size(env_of({{"OMPI_COMM_WORLD_SIZE", "x"}, {"PMI_SIZE", "2"}})) == 2);

  CHECK_FALSE(use_mpi("", env_of({})));
  CHECK_FALSE(use_mpi("", env_of({{"OMPI_COMM_WORLD_SIZE", "1"}})));  // one process: the threads path
  CHECK(use_mpi("", env_of({{"OMPI_COMM_WORLD_SIZE", "2"}})));
  CHECK(use_mpi("on", env_of({})));
  CHECK_FALSE(use_mpi("off", env_of({{"SLURM_STEP_NUM_TASKS", "8"}})));
}

TEST_CASE("the plan's groups split the world communicator once per round of disjoint groups",
          "[calib][validate]") {
  // 2 x 2 mesh: dim 0 groups {0,2} {1,3}, dim 1 groups {0,1} {2,3}.
  auto rounds = split_rounds({{0, 2}, {1, 3}, {0, 1}, {2, 3}}, 4);
  REQUIRE(rounds.size() == 2);
  CHECK(rounds[0] == std::vector<int>{0, 1});
  CHECK(rounds[1] == std::vector<int>{2, 3});
  // A pipeline's send/recv pairs overlap: {0,1} {1,2} need two rounds, {2,3} fits the first.
  rounds = split_rounds({{0, 1}, {1, 2}, {2, 3}}, 4);
  REQUIRE(rounds.size() == 2);
  CHECK(rounds[0] == std::vector<int>{0, 2});
  CHECK(rounds[1] == std::vector<int>{1});
  CHECK(split_rounds({}, 1).empty());
  CHECK(split_rounds({{0}}, 1) == std::vector<std::vector<int>>{{0}});
}
