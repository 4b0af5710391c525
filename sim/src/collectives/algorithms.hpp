// The collective algorithm functions, one file each (<coll>_<algo>.cpp); table.cpp lists them.
#pragma once
#include "autoddl/sim/collectives.hpp"

namespace autoddl::sim::collectives {

void all_reduce_ring(const RankGroup& g, double bytes, Fidelity f);
void all_gather_ring(const RankGroup& g, double bytes, Fidelity f);
void reduce_scatter_ring(const RankGroup& g, double bytes, Fidelity f);
void all_reduce_tree(const RankGroup& g, double bytes, Fidelity f);
void all_reduce_hierarchical(const RankGroup& g, double bytes, Fidelity f);
void all_gather_hierarchical(const RankGroup& g, double bytes, Fidelity f);
void reduce_scatter_hierarchical(const RankGroup& g, double bytes, Fidelity f);
void all_to_all_direct(const RankGroup& g, double bytes, Fidelity f);
void send_recv_direct(const RankGroup& g, double bytes, Fidelity f);

bool any_group(int ranks, int local_size);
bool tree_group(int ranks, int local_size);
bool hierarchical_group(int ranks, int local_size);
bool pair_group(int ranks, int local_size);

}  // namespace autoddl::sim::collectives
