// Hierarchical all-reduce on a [nodes n, gpus g] group (DESIGN.md "nd boxing"; Horovod's and
// NCCL's tree-of-rings idea): ring reduce-scatter inside each node (S), then g concurrent
// ring all-reduces across nodes, one per local rank, each on S/g, then ring all-gather inside
// each node. The g inter-node rings share each node's NIC, as they do on real clusters.
#include "algorithms.hpp"
#include "rings.hpp"

namespace autoddl::sim::collectives {

void all_reduce_hierarchical(const RankGroup& grp, double bytes, Fidelity f) {
  const int g = grp.local_size;
  const int n = grp.size() / g;
  const auto intra = intra_node_rings(grp);
  run_rings(intra, g - 1, bytes / g, f);
  run_rings(inter_node_rings(grp), 2 * (n - 1), bytes / g / n, f, inter_channels(grp));
  run_rings(intra, g - 1, bytes / g, f);
}

bool hierarchical_group(int ranks, int local_size) {
  return local_size > 1 && ranks % local_size == 0 && ranks / local_size > 1;
}

}  // namespace autoddl::sim::collectives
