// Direct all-to-all (NCCL: one group of p−1 sends and receives per rank): every rank sends its
// S/p block to each other rank, all at once, S = each rank's whole buffer as in nccl-tests.
// The flows share ports and NICs as they would; the α-β model's (p−1) latency terms are
// waited first. Uncontended: (p−1)·α + the busiest resource's bytes / bandwidth, which is
// costmodel's (p−1)·α + max(intra, inter) term. There are no rounds to pace, so step and flow
// fidelity are the same here (pairwise rounds with a barrier each would leave NICs idle).
#include <algorithm>

#include "../transfers.hpp"
#include "algorithms.hpp"

namespace autoddl::sim::collectives {

void all_to_all_direct(const RankGroup& g, double bytes, Fidelity /*f*/) {
  const int p = g.size();
  if (p < 2) return;
  auto host = [&](int i) { return g.hosts[static_cast<size_t>(i % p)]; };
  // The slowest route, sampled from rank 0 and between neighbours (O(p) lookups, exact on
  // the platforms we build, where routes differ only by crossing a node boundary).
  double max_latency_s = 0;
  for (int i = 1; i < p; ++i) {
    max_latency_s = std::max(max_latency_s, route_latency_s(host(0), host(i)));
    max_latency_s = std::max(max_latency_s, route_latency_s(host(i), host(i + 1)));
  }
  wait_latency((p - 2) * max_latency_s);
  Transfers batch;
  for (int k = 1; k < p; ++k)
    for (int i = 0; i < p; ++i) batch.add(host(i), host(i + k), bytes / p);
  batch.wait_all();
}

}  // namespace autoddl::sim::collectives
