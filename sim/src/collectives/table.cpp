// The simulator's step generators: one row per (collective kind, algorithm), keyed by the ids
// of costmodel's algorithm table (collective.hpp), so the algorithm a cost was priced with is
// the one simulated. Adding a generator is one file <coll>_<algo>.cpp plus one row here (or
// register_collective_algorithm() from test code); the executor, simulate_collective, the
// lowering and the generic tests reach algorithms only through this table.
#include <xbt/asserts.h>

#include "algorithms.hpp"

namespace autoddl::sim {

using costmodel::CollectiveAlgo;
using costmodel::CollectiveKind;

namespace collectives {
bool any_group(int ranks, int /*local_size*/) { return ranks >= 1; }
}  // namespace collectives

namespace {
std::vector<CollectiveAlgorithm>& table() {
  using namespace collectives;
  static std::vector<CollectiveAlgorithm> rows = {
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
  return rows;
}
}  // namespace

const std::vector<CollectiveAlgorithm>& collective_algorithms() { return table(); }

void register_collective_algorithm(const CollectiveAlgorithm& row) {
  xbt_assert(row.applies && row.run && !find_collective_algorithm(row.kind, row.algo),
             "collective generator %s: needs applies() and run(), and a (kind, algorithm) not taken", row.name.data());
  table().push_back(row);
}

void unregister_collective_algorithm(CollectiveKind kind, CollectiveAlgo algo) {
  auto& rows = table();
  xbt_assert(rows.back().kind == kind && rows.back().algo == algo, "only the generator registered last can be removed");
  rows.pop_back();
}

CollectiveAlgo runnable_algorithm(CollectiveKind kind, CollectiveAlgo algo, const std::vector<int>& devices,
                                  int gpus_per_node) {
  const CollectiveAlgorithm* row = find_collective_algorithm(kind, algo);
  if (row && row->applies(static_cast<int>(devices.size()), ranks_per_node(devices, gpus_per_node))) return algo;
  return default_algorithm(kind);
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

CollectiveAlgo default_algorithm(CollectiveKind kind) { return costmodel::collective_info(kind).default_algo; }

}  // namespace autoddl::sim
