// A strategy's gradient sync over one data-parallel group, emitted as sim::Program tasks (sync/
// internal; built only with sim/). One lowering for both SimGrid uses of a strategy: the sync
// module's own iteration (simulated.cpp) and an SBP scheme's iteration whose DDP buckets it
// replaces (scheme_sim.cpp), so that the two simulate a strategy the same way:
//
// * All-reduce groups: one collective per fusion group over the group's ranks on `ar_stream`,
//   in ready order (ties: group id), released on every rank by the task that makes its last
//   member ready; sparse members add an all-gather of their touched rows and indices. A group
//   with fp16-compressed members casts them on every rank, on the same stream, before (fp32 ->
//   fp16) and after (fp16 -> fp32) its all-reduce: compute tasks of half fp16_cast_s each
//   (compression.hpp), as the analytical evaluator charges them.
// * PS (flows in ps_flows.hpp, after AutoDist's PSSynchronizer): the server of a shard on group
//   node n is the group's first rank on that node, and each node's first rank stands in for
//   its CPU (sim/ has GPU hosts only; they sit behind the same node NIC). Every node sums its
//   ranks' gradients with an intra-node collective once they are ready; each other node's
//   first rank w pushes the sum to the server on lane first_lane + w·nodes + n (the same stream
//   index on both ends), so a node talks to all servers at once and the pushes of all nodes
//   reach a server at once and share its NIC (incast). The update goes back to every rank of
//   the node (one send each on its own lane) or, with local replication, to the node's first
//   rank (its proxy), followed by an intra-node all-gather (the copies into the node's GPUs);
//   the server node's ranks read it with the same all-gather. Synchronous: the pulls wait for
//   every push and the server node's sum; asynchronous (sync false, staleness > 0): a node's
//   pulls wait for its own push only. A node's intra-node collectives for a server run on its
//   first rank's lane to that server, after its earlier shards there.
// * Emission follows the pieces' ready order (PS shards and groups interleaved), so every
//   dependency is on an earlier task (program.hpp).
#pragma once
#ifdef AUTODDL_SYNC_HAVE_SIM
#include <cstdint>
#include <functional>
#include <vector>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/sim/program.hpp"
#include "autoddl/sync/strategy.hpp"

namespace autoddl::sync::detail {

struct SyncGroupLayout {
  std::vector<int> devices;  // rank r's GPU, node-major: rank r is on group node r / ranks_per_node
  int nodes = 1, ranks_per_node = 1;
  int ar_stream = sim::kCommStream;
  int first_lane = 2;        // PS lanes: first_lane + rank·nodes + server node
  int channels = 0;          // sim::Task::channels of the all-reduce collectives
  sim::Phase phase = sim::Phase::grad_sync;
  int stage = -1;
};

// The number of PS lanes a layout needs past first_lane.
inline int ps_lanes(const SyncGroupLayout& l) { return static_cast<int>(l.devices.size()) * l.nodes; }

struct SyncEmitInput {
  const std::vector<Variable>* vars = nullptr;
  const Strategy* strategy = nullptr;        // validated against *vars and `cluster`
  const costmodel::ClusterSpec* cluster = nullptr;  // the group as a cluster (algorithm choice, α-β)
  // Per variable (indexed like *vars): when its gradient is ready; smaller first. Pieces of
  // equal order keep strategy order, groups of equal order go by id.
  std::vector<double> order;
  // The task after which variable v's gradient is ready on rank r.
  std::function<sim::TaskId(int rank, int var)> ready;
  // Jitter factor of one transfer's bytes (1 when absent); called in emission order.
  std::function<double()> bytes_factor;
};

struct SyncEmitResult {
  int64_t transfers = 0;              // collectives and send/recv tasks
  std::vector<sim::TaskId> tasks;     // every emitted task, in order
  std::vector<double> expected_s;     // per emitted task: its uncontended α-β time
};

SyncEmitResult emit_strategy_sync(sim::Program& p, const SyncGroupLayout& layout, const SyncEmitInput& in);

}  // namespace autoddl::sync::detail
#endif
