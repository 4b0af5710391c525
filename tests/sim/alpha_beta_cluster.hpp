// A preset without its `nccl` block: the simulator then runs its own algorithms' flows at their
// α-β times, which these tests pin. With the block, collectives are scaled to the time NCCL's
// tuning model gives (sim/src/executor.cpp), which tests/sim/lowering/agreement_test.cpp and
// the pipeline test check against the analytical model instead.
#pragma once
#include "autoddl/costmodel/cluster.hpp"

namespace autoddl::sim_test {

inline costmodel::ClusterSpec alpha_beta_cluster(const char* preset, int nodes) {
  costmodel::ClusterSpec c = costmodel::resolve_cluster(preset, nodes);
  c.nccl.reset();
  return c;
}

}  // namespace autoddl::sim_test
