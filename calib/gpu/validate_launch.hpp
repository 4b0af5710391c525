// validate_runner's launcher logic, pure C++ (no CUDA, no MPI): whether this process is one
// rank of a launcher's job (mpirun / srun), and how the plan's communicator groups become
// ncclCommSplit calls. Header-only so tests/calib_gpu can check it without a GPU.
#pragma once
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace autoddl::calib::gpu {

using EnvLookup = std::function<const char*(const char*)>;

inline EnvLookup process_env() {
  return [](const char* name) { return std::getenv(name); };
}

// The number of processes a launcher started, from its environment; 0 when none says.
// Open MPI's mpirun (OMPI_COMM_WORLD_SIZE), MPICH / Intel MPI's Hydra (PMI_SIZE), srun
// (SLURM_STEP_NUM_TASKS, set inside a job step only, so not in an sbatch script itself).
inline int launcher_world_size(const EnvLookup& env) {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"}) {
    const char* v = env(name);
    if (!v || !*v) continue;
    char* end = nullptr;
    long n = std::strtol(v, &end, 10);
    if (*end == '\0' && n > 0) return static_cast<int>(n);
  }
  return 0;
}

// --mpi / --no-mpi: "on" / "off"; "" (neither): MPI when a launcher started more than one process.
inline bool use_mpi(const std::string& flag, const EnvLookup& env) {
  if (flag == "on") return true;
  if (flag == "off") return false;
  return launcher_world_size(env) > 1;
}

// The plan's groups (each a list of world ranks) in rounds of disjoint groups: one
// ncclCommSplit of the world communicator per round, color = the group's index in the round
// (NCCL_SPLIT_NOCOLOR for ranks in none of the round's groups), key = the rank's position in
// its group, so NCCL ranks follow the plan's order. The groups of one mesh dim are disjoint,
// so a plan needs one round per mesh dim; first fit keeps any other plan correct too. Every
// process computes the same rounds from the same plan.
inline std::vector<std::vector<int>> split_rounds(const std::vector<std::vector<int>>& groups, int world) {
  std::vector<std::vector<int>> rounds;    // group indices
  std::vector<std::vector<char>> used;     // per round: which world ranks are taken
  for (size_t g = 0; g < groups.size(); ++g) {
    size_t r = 0;
    for (; r < rounds.size(); ++r) {
      bool free = true;
      for (int x : groups[g]) free = free && !(x >= 0 && x < world && used[r][x]);
      if (free) break;
    }
    if (r == rounds.size()) {
      rounds.emplace_back();
      used.emplace_back(static_cast<size_t>(world), 0);
    }
    rounds[r].push_back(static_cast<int>(g));
    for (int x : groups[g]) {
      if (x >= 0 && x < world) used[r][x] = 1;
    }
  }
  return rounds;
}

}  // namespace autoddl::calib::gpu
