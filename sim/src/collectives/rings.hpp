// Building blocks the collective algorithms share: rings run in lockstep, and pairwise
// exchange rounds. Each turns its steps into Transfers (transfers.hpp) from the calling actor.
#pragma once
#include <vector>

#include "autoddl/sim/collectives.hpp"

namespace autoddl::sim::collectives {

using Ring = std::vector<sg4::Host*>;

// `steps` rounds over several disjoint rings at once; in each round every rank sends
// `chunk_bytes` to its successor, split into `channels` equal flows where the edge crosses
// nodes (NCCL's channels, one per NIC). step fidelity: one round of transfers at a time,
// each waited for (a synchronous ring step, as NCCL's ring is paced by its slowest link).
// flow fidelity: one transfer of steps·chunk_bytes per rank (and channel), after waiting the
// other steps − 1 latencies of the slowest ring edge. Uncontended both take
// steps·(α + chunk·β) on the ring's slowest edge.
void run_rings(const std::vector<Ring>& rings, int steps, double chunk_bytes, Fidelity fidelity,
               int channels = 1);

// The ring of all ranks of a group, and the rings of a node-major group with `local` ranks
// per node: one per node (intra) and one per local index across nodes (inter).
std::vector<Ring> whole_ring(const RankGroup& g);
std::vector<Ring> intra_node_rings(const RankGroup& g);
std::vector<Ring> inter_node_rings(const RankGroup& g);
// Channels per inter-node ring so that a node's local_size concurrent rings cover all its NICs
// (one each when there are at least as many ranks per node as NICs).
int inter_channels(const RankGroup& g);

}  // namespace autoddl::sim::collectives
