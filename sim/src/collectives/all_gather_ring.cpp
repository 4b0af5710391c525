// Ring all-gather: p−1 steps in which every rank forwards one S/p block (S = the gathered
// tensor, as nccl-tests' size) to its successor. α-β: (p−1)·α + (p−1)/p·S·β.
#include "algorithms.hpp"
#include "rings.hpp"

namespace autoddl::sim::collectives {

void all_gather_ring(const RankGroup& g, double bytes, Fidelity f) {
  const int p = g.size();
  run_rings(whole_ring(g), p - 1, bytes / p, f, g.nic_channels);
}

}  // namespace autoddl::sim::collectives
