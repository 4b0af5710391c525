// The collective algorithm table: one row per (collective, algorithm). Adding an algorithm
// is one file <coll>_<algo>.cpp plus one row here; the executor, simulate_collective and the
// generic tests reach algorithms only through this table.
#include <xbt/asserts.h>

#include "algorithms.hpp"

namespace autoddl::sim {

using costmodel::CollectiveAlgo;
using costmodel::CollectiveKind;

namespace collectives {
bool any_group(int ranks, int /*local_size*/) { return ranks >= 1; }
}  // namespace collectives

const std::vector<CollectiveAlgorithm>& collective_algorithms() {
  using namespace collectives;
  static const std::vector<CollectiveAlgorithm> table = {
      {CollectiveKind::all_reduce, CollectiveAlgo::ring, "all_reduce_ring", any_group, all_reduce_ring},
      {CollectiveKind::all_reduce, CollectiveAlgo::tree, "all_reduce_tree", tree_group, all_reduce_tree},
      {CollectiveKind::all_reduce, CollectiveAlgo::hierarchical, "all_reduce_hierarchical",
       hierarchical_group, all_reduce_hierarchical},
      {CollectiveKind::all_gather, CollectiveAlgo::ring, "all_gather_ring", any_group, all_gather_ring},
      {CollectiveKind::all_gather, CollectiveAlgo::hierarchical, "all_gather_hierarchical",
       hierarchical_group, all_gather_hierarchical},
      {CollectiveKind::reduce_scatter, CollectiveAlgo::ring, "reduce_scatter_ring", any_group,
       reduce_scatter_ring},
      {CollectiveKind::reduce_scatter, CollectiveAlgo::hierarchical, "reduce_scatter_hierarchical",
       hierarchical_group, reduce_scatter_hierarchical},
      {CollectiveKind::all_to_all, CollectiveAlgo::direct, "all_to_all_direct", any_group, all_to_all_direct},
      {CollectiveKind::send_recv, CollectiveAlgo::direct, "send_recv_direct", pair_group, send_recv_direct},
  };
  return table;
}

const CollectiveAlgorithm* find_collective_algorithm(CollectiveKind kind, CollectiveAlgo algo) {
  for (const auto& row : collective_algorithms())
    if (row.kind == kind && row.algo == algo) return &row;
  return nullptr;
}

void run_collective(CollectiveKind kind, CollectiveAlgo algo, const RankGroup& group, double bytes,
                    Fidelity fidelity) {
  const CollectiveAlgorithm* row = find_collective_algorithm(kind, algo);
  xbt_assert(row, "no simulated algorithm for collective %d / algorithm %d", static_cast<int>(kind),
             static_cast<int>(algo));
  xbt_assert(row->applies(group.size(), group.local_size), "%s does not apply to %d ranks (%d per node)",
             row->name.data(), group.size(), group.local_size);
  if (group.size() < 2) return;
  row->run(group, bytes, fidelity);
}

int ranks_per_node(const std::vector<int>& devices, int gpus_per_node) {
  int local = 0, count = 0, node = -1;
  for (int d : devices) {
    const int n = d / gpus_per_node;
    if (n == node) {
      ++count;
      continue;
    }
    if (node >= 0) {
      if (n < node || (local != 0 && count != local)) return 0;
      local = count;
    }
    node = n;
    count = 1;
  }
  if (local == 0) local = count;
  return count == local ? local : 0;
}

CollectiveAlgo default_algorithm(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::all_reduce:
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter: return CollectiveAlgo::ring;
    case CollectiveKind::all_to_all:
    case CollectiveKind::send_recv: return CollectiveAlgo::direct;
  }
  return CollectiveAlgo::ring;
}

}  // namespace autoddl::sim
