// The nccl-tests runs that measure what one scheme's plan needs (`autoddl calibrate --plan-for`):
// for each (collective, group shape) of costmodel::collectives_needed, one nccl-tests command
// whose groups have that shape and run as many at once per node as the plan's do, so that
// `autoddl fit` files the measurement under the key the cost model looks up (kind, ranks,
// ranks per node, groups per node), over sizes covering the plan's.
#pragma once
#include <string>
#include <vector>

#include "autoddl/costmodel/calibration_coverage.hpp"

namespace autoddl::calib {

struct NcclTestsCommand {
  std::string what;     // "all_reduce over mesh dim 0: 2 ranks, 1 per node, 8 groups per node"
  std::string env;      // "NCCL_TESTS_SPLIT=MOD 8", or "" for one group
  int ranks = 0;        // processes to launch (one per GPU)
  int ranks_per_node = 0;
  std::string program;  // "all_reduce_perf"
  int64_t min_bytes = 0, max_bytes = 0;  // -b / -e, powers of two around the plan's sizes
  std::string note;     // a limit of the command (a shape no split expresses), or ""
  std::string command;  // the whole line, mpirun form
};

// One command per need that nccl-tests can measure (all but the pipeline's stage sends, which
// no calibration changes), in the order given. gpus_per_node: the cluster's.
std::vector<NcclTestsCommand> nccl_tests_commands(const std::vector<costmodel::CollectiveNeed>& needs,
                                                  int gpus_per_node);

}  // namespace autoddl::calib
