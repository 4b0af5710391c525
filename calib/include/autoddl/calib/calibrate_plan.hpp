// What `autoddl calibrate` runs on a node: every microbenchmark program once, and each NCCL one
// once per group size, so the cost model gets exact (collective, ranks) entries for the tensor-
// parallel groups it prices (TP = 2, 4, ...) and not only for the whole node (issue 16, defect 8).
// Across nodes (`calibrate --launcher`), the group shapes a device mesh needs (see
// mesh_group_shapes), each run as ranks of one launch split into groups.
// Pure planning: the CLI executes the runs; tests check the plan without a GPU.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace autoddl::calib {

struct BenchInfo {
  const char* program;  // an executable in build/calib/gpu/
  const char* what;
  bool nccl;            // swept over group sizes (-g)
};

// The microbenchmarks in the order they run (cheap ones first): calib/benchmarks.cmake, the one
// list that calib/gpu also builds its programs from.
const std::vector<BenchInfo>& calibration_benchmarks();

// Group sizes for a node of `gpus` GPUs: the powers of two from 2 below it, then `gpus` itself
// ({2, 4, 8} for 8; {2, 4, 6} for 6); {1} for one GPU (world size 1: the launch latency only).
std::vector<int> nccl_group_sizes(int gpus);

struct PlannedRun {
  std::string program;            // the executable's name
  std::vector<std::string> args;  // after the program, before --json FILE
  std::string stem;               // output files: <stem>.json and <stem>.txt
  const char* what;
};

// `only` (program names; empty = all) filters; `quick` adds --quick to every run.
std::vector<PlannedRun> calibration_plan(int gpus, bool quick, const std::vector<std::string>& only);

// The processes one launcher command starts: nodes x ranks (one GPU each) per node.
struct WorldShape {
  int nodes = 1;
  int gpus_per_node = 1;
};

// Reads the world from a launcher command line. Slurm (a word ending in "srun"): -N/--nodes,
// --ntasks-per-node, else -n/--ntasks divided by the nodes. mpirun/mpiexec: -np/-n/--np total,
// and per node -N, --npernode/-npernode, -ppn (Hydra) or --map-by ppr:K:node. Values may be
// attached (-N4, --nodes=4) or separate. nullopt and `why_not` when it cannot tell; the CLI
// then asks for --nodes and --gpus-per-node.
std::optional<WorldShape> parse_launcher(const std::string& command, std::string& why_not);

// A group shape to measure: `groups_per_node` groups of `ranks` ranks, `ranks_per_node` of them
// on each node they span, all running the collective at once (concurrent groups share the NICs).
struct GroupShape {
  int ranks = 1;
  int ranks_per_node = 1;
  int groups_per_node = 1;
  const char* why = "";
  std::string stem_suffix() const;  // "_g4_pn1_c8"
};

// What a mesh over the world needs, in this order: inside a node 2, 4, ..., gpus_per_node ranks;
// one rank per node over 2, 4, ..., nodes nodes, alone and with gpus_per_node groups at once
// (every GPU of the node in one such group, as a data-parallel dim across nodes runs); and
// 2, 4, ..., nodes whole nodes (the last one is the world).
std::vector<GroupShape> mesh_group_shapes(const WorldShape& w);

// The runs of `calibrate --launcher`: gpu_info, then the compute programs on every rank, then
// each NCCL program per group shape (args --group-ranks R --ranks-per-node r --groups-per-node k).
std::vector<PlannedRun> launcher_plan(const WorldShape& w, bool quick, const std::vector<std::string>& only);

}  // namespace autoddl::calib
