// Ring schedules in lockstep and the ring layouts of a rank group (see rings.hpp).
#include "rings.hpp"

#include <algorithm>

#include "../transfers.hpp"

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(autoddl_sim_rings, autoddl_sim, "autoddl: ring schedules");

namespace autoddl::sim::collectives {

void run_rings(const std::vector<Ring>& rings, int steps, double chunk_bytes, Fidelity fidelity) {
  if (steps <= 0) return;
  Transfers batch;
  if (fidelity == Fidelity::step) {
    for (int s = 0; s < steps; ++s) {
      for (const Ring& r : rings) {
        const size_t p = r.size();
        if (p < 2) continue;
        for (size_t i = 0; i < p; ++i) batch.add(r[i], r[(i + 1) % p], chunk_bytes);
      }
      batch.wait_all();
    }
    return;
  }
  double max_latency_s = 0;
  for (const Ring& r : rings) {
    const size_t p = r.size();
    if (p < 2) continue;
    for (size_t i = 0; i < p; ++i)
      max_latency_s = std::max(max_latency_s, route_latency_s(r[i], r[(i + 1) % p]));
  }
  wait_latency((steps - 1) * max_latency_s);
  for (const Ring& r : rings) {
    const size_t p = r.size();
    if (p < 2) continue;
    for (size_t i = 0; i < p; ++i) batch.add(r[i], r[(i + 1) % p], steps * chunk_bytes);
  }
  batch.wait_all();
}

std::vector<Ring> whole_ring(const RankGroup& g) { return {g.hosts}; }

std::vector<Ring> intra_node_rings(const RankGroup& g) {
  std::vector<Ring> rings;
  for (int start = 0; start < g.size(); start += g.local_size)
    rings.emplace_back(g.hosts.begin() + start, g.hosts.begin() + start + g.local_size);
  return rings;
}

std::vector<Ring> inter_node_rings(const RankGroup& g) {
  std::vector<Ring> rings(static_cast<size_t>(g.local_size));
  for (int i = 0; i < g.size(); ++i) rings[static_cast<size_t>(i % g.local_size)].push_back(g.hosts[static_cast<size_t>(i)]);
  return rings;
}

}  // namespace autoddl::sim::collectives
