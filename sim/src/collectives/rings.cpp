// Ring schedules in lockstep and the ring layouts of a rank group (see rings.hpp).
#include "rings.hpp"

#include <algorithm>

#include "../transfers.hpp"

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(autoddl_sim_rings, autoddl_sim, "autoddl: ring schedules");

namespace autoddl::sim::collectives {

namespace {
bool crosses_nodes(const sg4::Host* a, const sg4::Host* b) {
  return a->get_englobing_zone() != b->get_englobing_zone();
}

// Every edge of every ring, each `steps`·`chunk_bytes` long, split into channels across nodes.
void add_edges(Transfers& batch, const std::vector<Ring>& rings, double bytes, int channels) {
  for (const Ring& r : rings) {
    const size_t p = r.size();
    if (p < 2) continue;
    for (size_t i = 0; i < p; ++i) {
      sg4::Host* src = r[i];
      sg4::Host* dst = r[(i + 1) % p];
      const int flows = crosses_nodes(src, dst) ? channels : 1;
      for (int c = 0; c < flows; ++c) batch.add(src, dst, bytes / flows);
    }
  }
}
}  // namespace

void run_rings(const std::vector<Ring>& rings, int steps, double chunk_bytes, Fidelity fidelity, int channels) {
  if (steps <= 0) return;
  channels = std::max(1, channels);
  Transfers batch;
  if (fidelity == Fidelity::step) {
    for (int s = 0; s < steps; ++s) {
      add_edges(batch, rings, chunk_bytes, channels);
      batch.wait_all();
    }
    return;
  }
  double max_latency_s = 0;
  for (const Ring& r : rings) {
    const size_t p = r.size();
    if (p < 2) continue;
    for (size_t i = 0; i < p; ++i) max_latency_s = std::max(max_latency_s, route_latency_s(r[i], r[(i + 1) % p]));
  }
  wait_latency((steps - 1) * max_latency_s);
  add_edges(batch, rings, steps * chunk_bytes, channels);
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

int inter_channels(const RankGroup& g) {
  return std::max(1, (g.nic_channels + g.local_size - 1) / std::max(1, g.local_size));
}

}  // namespace autoddl::sim::collectives
