// Hierarchical all-gather on a [nodes n, gpus g] group: g concurrent ring all-gathers across
// nodes (local rank j gathers the n blocks of its rail, S/g in all), then a ring all-gather
// inside each node on S. Mirrors costmodel's hierarchical AG: the inter rings share the NIC.
#include "algorithms.hpp"
#include "rings.hpp"

namespace autoddl::sim::collectives {

void all_gather_hierarchical(const RankGroup& grp, double bytes, Fidelity f) {
  const int g = grp.local_size;
  const int n = grp.size() / g;
  run_rings(inter_node_rings(grp), n - 1, bytes / g / n, f, inter_channels(grp));
  run_rings(intra_node_rings(grp), g - 1, bytes / g, f);
}

}  // namespace autoddl::sim::collectives
