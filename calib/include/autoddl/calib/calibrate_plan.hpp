// What `autoddl calibrate` runs on a node: every microbenchmark program once, and each NCCL one
// once per group size, so the cost model gets exact (collective, ranks) entries for the tensor-
// parallel groups it prices (TP = 2, 4, ...) and not only for the whole node (issue 16, defect 8).
// Pure planning: the CLI executes the runs; tests check the plan without a GPU.
#pragma once
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

}  // namespace autoddl::calib
