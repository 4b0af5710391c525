// Hierarchical reduce-scatter on a [nodes n, gpus g] group, the mirror of the all-gather:
// a ring reduce-scatter inside each node on S, then g concurrent ring reduce-scatters across
// nodes on S/g each (they share the NIC), as costmodel's hierarchical RS.
#include "algorithms.hpp"
#include "rings.hpp"

namespace autoddl::sim::collectives {

void reduce_scatter_hierarchical(const RankGroup& grp, double bytes, Fidelity f) {
  const int g = grp.local_size;
  const int n = grp.size() / g;
  run_rings(intra_node_rings(grp), g - 1, bytes / g, f);
  run_rings(inter_node_rings(grp), n - 1, bytes / g / n, f, inter_channels(grp));
}

}  // namespace autoddl::sim::collectives
