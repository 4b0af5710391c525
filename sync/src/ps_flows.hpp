// What one PS shard moves each step, as AutoDist's PSSynchronizer builds it (sync/ internal;
// both evaluators price these flows: analytical.cpp with α-β and costmodel's collectives,
// sync_emit.cpp as SimGrid tasks). Read from autodist/kernel/synchronization/ps_synchronizer.py
// and autodist/kernel/common/proxy_variable.py (petuum/autodist master):
//
// * in_graph_apply / _aggregate_gradients: the node's GPU replicas share one variable and
//   their gradients are summed on the worker's CPU:0 ("Hierarchical reduction at local node",
//   add_n then realdiv; a SparseConditionalAccumulator for IndexedSlices) whether or not
//   local_replication is set. So a worker node pushes ONE gradient per shard: the dense shard,
//   or the touched rows of the node's share of the batch. The reduction is priced as the
//   node's GPUs' intra-node all-reduce of the shard (dense) or all-gather of their touched rows
//   (sparse): the copies into the CPU and the sum, in the fabric's collective model.
// * between_graph_apply: sync = true puts a ConditionalAccumulator on the PS taking
//   num_workers gradients (one per node) and token queues that hold every worker until the
//   update is applied: a node's pull waits for all pushes. sync = false returns early (no
//   accumulator, no queues): each node's gradient is applied on arrival and its next read
//   follows its own push. staleness > 0 takes 1 gradient per apply and lets a worker run up
//   to `staleness` steps ahead (FIFOQueues of that size): within the one step the evaluators
//   price it never binds, so it steps as sync = false.
// * Reads: _share_variable points every replica's reads at replica 0's read of the PS
//   variable, so without a proxy each GPU of a worker node receives the shard from the PS
//   (TF sends a tensor once per consuming device). local_replication (_create_proxy, dense
//   gradients only, not on the server's own node) keeps a ProxyVariable on the worker's CPU:0,
//   refreshed once per step from the PS (get_all_update_ops), and the node's GPUs read the
//   proxy: one pull per node, then intra-node copies, priced as an all-gather of the shard
//   over the node's GPUs (each GPU's link carries what a copy of the shard would). The
//   server node's own GPUs read the shard from its CPU the same way.
#pragma once
#include "autoddl/costmodel/collective.hpp"
#include "autoddl/sync/strategy.hpp"

namespace autoddl::sync::detail {

struct PsShardFlows {
  bool proxy = false;       // local replication in effect: dense, and a node has > 1 GPU
  bool async = false;       // sync false or staleness > 0: a node's pull follows its own push
  double push_bytes = 0;    // the one push of each worker node (its summed gradient)
  double pull_bytes = 0;    // one pull message
  int pulls_per_node = 1;   // 1 with a proxy, else one per GPU of the node
  // Intra-node work on every node (zero bytes when a node has one GPU).
  costmodel::CollectiveKind reduce_kind = costmodel::CollectiveKind::all_reduce;
  double reduce_bytes = 0;  // the node's reduction onto its CPU (collective of this many bytes)
  double read_bytes = 0;    // all-gather over the node's GPUs: reads of the proxy / server CPU
};

// `fraction` of the variable's elements in this shard; `nodes` x `gpus_per_node` replicas.
PsShardFlows ps_shard_flows(const Variable& v, double fraction, const Synchronizer& s, int nodes,
                            int gpus_per_node);

}  // namespace autoddl::sync::detail
