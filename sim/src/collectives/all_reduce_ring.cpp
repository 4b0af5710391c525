// Ring all-reduce (Patarasuk & Yuan 2009; NCCL's ring): reduce-scatter then all-gather, 2(p−1)
// steps in which every rank sends S/p to its successor. α-β: 2(p−1)·α + 2(p−1)/p·S·β.
#include "algorithms.hpp"
#include "rings.hpp"

namespace autoddl::sim::collectives {

void all_reduce_ring(const RankGroup& g, double bytes, Fidelity f) {
  const int p = g.size();
  run_rings(whole_ring(g), 2 * (p - 1), bytes / p, f, g.nic_channels);
}

}  // namespace autoddl::sim::collectives
