// Collective algorithms as point-to-point steps, one table keyed by (collective, algorithm).
// An algorithm turns (a group of hosts in logical order, a byte count) into transfers issued
// lazily from the calling actor with Comm::sendto_async, so concurrent collectives share links.
// It runs inside a SimGrid actor and returns when the collective is done. The table's keys are
// costmodel's algorithm ids (collective.hpp's collective_algos()). Adding an algorithm is one
// file sim/src/collectives/<coll>_<algo>.cpp plus one row in collectives/table.cpp, or
// register_collective_algorithm() from test code.
#pragma once
#include <string_view>
#include <vector>

#include <simgrid/s4u.hpp>

#include "autoddl/costmodel/collective.hpp"
#include "autoddl/sim/simulate.hpp"

namespace autoddl::sim {

namespace sg4 = simgrid::s4u;

// The logical topology an algorithm is handed. hosts: rank order (the ring order).
// local_size: ranks per node when hosts are node-major with equal counts per node (hierarchical
// algorithms need it); 0 if unknown.
// nic_channels: NICs per node. One flow crosses the network through one NIC (platform.hpp), so
// a ring spreads each node-crossing step over this many flows, as NCCL spreads a ring
// collective over one channel per NIC.
struct RankGroup {
  std::vector<sg4::Host*> hosts;
  int local_size = 0;
  int nic_channels = 1;
  int size() const { return static_cast<int>(hosts.size()); }
};

using CollectiveFn = void (*)(const RankGroup& group, double bytes, Fidelity fidelity);

struct CollectiveAlgorithm {
  costmodel::CollectiveKind kind;
  costmodel::CollectiveAlgo algo;
  std::string_view name;  // "all_reduce_ring"
  // Whether the algorithm can run a group of `ranks` with `local_size` per node (as in
  // RankGroup); e.g. hierarchical needs > 1 node and > 1 rank per node.
  bool (*applies)(int ranks, int local_size);
  CollectiveFn run;
};

const std::vector<CollectiveAlgorithm>& collective_algorithms();
// Adds a generator at run time (test code's toy algorithms); its algo id comes from
// costmodel::register_collective_algo(). Not thread-safe: register before simulating.
void register_collective_algorithm(const CollectiveAlgorithm& row);
// Removes the generator registered last (a test's toy, after the test); it must be (kind, algo).
void unregister_collective_algorithm(costmodel::CollectiveKind kind, costmodel::CollectiveAlgo algo);
// nullptr if the pair has no row.
const CollectiveAlgorithm* find_collective_algorithm(costmodel::CollectiveKind kind,
                                                     costmodel::CollectiveAlgo algo);
// Runs the collective from the current actor; xbt_die if the row is missing or does not
// apply (callers check first: the executor validates programs before the simulation starts).
void run_collective(costmodel::CollectiveKind kind, costmodel::CollectiveAlgo algo,
                    const RankGroup& group, double bytes, Fidelity fidelity);

// RankGroup::local_size of a group of global device ids: the ranks per node when the devices
// are node-major with the same count on every node, else 0.
int ranks_per_node(const std::vector<int>& devices, int gpus_per_node);

// The default algorithm per kind (collective_kinds()' default_algo): ring for all_reduce,
// all_gather and reduce_scatter, direct for all_to_all and send_recv.
costmodel::CollectiveAlgo default_algorithm(costmodel::CollectiveKind kind);
// `algo` when the simulator has it and it applies to this group of global device ids, else the
// kind's default: how a collective priced with `algo` is simulated.
costmodel::CollectiveAlgo runnable_algorithm(costmodel::CollectiveKind kind, costmodel::CollectiveAlgo algo,
                                             const std::vector<int>& devices, int gpus_per_node);

}  // namespace autoddl::sim
