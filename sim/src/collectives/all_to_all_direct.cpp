// Direct all-to-all as p−1 pairwise-exchange rounds (round k: rank i sends its S/p block for
// rank i+k), S = each rank's whole buffer as in nccl-tests. α-β: (p−1)·α + (p−1)/p·S·β.
// flow fidelity sends all p−1 blocks of a rank at once after (p−2) latencies, so flows meet
// the same links the rounds would.
#include <algorithm>

#include "../transfers.hpp"
#include "algorithms.hpp"

namespace autoddl::sim::collectives {

void all_to_all_direct(const RankGroup& g, double bytes, Fidelity f) {
  const int p = g.size();
  if (p < 2) return;
  const double block = bytes / p;
  auto host = [&](int i) { return g.hosts[static_cast<size_t>(i % p)]; };
  Transfers batch;
  if (f == Fidelity::step) {
    for (int k = 1; k < p; ++k) {
      for (int i = 0; i < p; ++i) batch.add(host(i), host(i + k), block);
      batch.wait_all();
    }
    return;
  }
  // The slowest route, sampled from rank 0 and between neighbours (O(p) lookups, exact on
  // the platforms we build, where routes differ only by crossing a node boundary).
  double max_latency_s = 0;
  for (int i = 1; i < p; ++i) {
    max_latency_s = std::max(max_latency_s, route_latency_s(host(0), host(i)));
    max_latency_s = std::max(max_latency_s, route_latency_s(host(i), host(i + 1)));
  }
  wait_latency((p - 2) * max_latency_s);
  for (int k = 1; k < p; ++k)
    for (int i = 0; i < p; ++i) batch.add(host(i), host(i + k), block);
  batch.wait_all();
}

}  // namespace autoddl::sim::collectives
