// Analytical evaluator of one strategy (AutoSync's "predefined" communication model,
// reference/autosync.md §4a, with costmodel's α-β collectives and compute model):
//
// * Compute: per op, costmodel::kernel_time_s of the op's work over W = all GPUs (data
//   parallel). Backward runs the ops in reverse; a variable's gradient is ready once the
//   backward reaches its first reader (variables.hpp).
// * PS, per shard on server node s, as AutoDist's PSSynchronizer moves it (sync/src/ps_flows.hpp
//   cites ps_synchronizer.py and proxy_variable.py): every node first sums its G GPUs' gradients
//   on its CPU (local_s gets reduce_s, an intra-node all-reduce of the shard's b bytes, or an
//   all-gather of the GPUs' touched rows for a sparse one), then each of the k = N−1 other nodes
//   pushes that one sum through s's NIC (bandwidth B = node_nic_bw_bytes_per_s, α =
//   inter.latency_s); the update goes back as pulls: one per GPU of each remote node (every GPU
//   reads the PS), or with local replication (dense shards, G > 1) one per node into its proxy,
//   whose copies into the node's GPUs (read_s, an intra-node all-gather of b) follow the pull
//   and add to local_s; the server node's own GPUs read the same way while the remote pulls
//   run (only the part of read_s beyond them is charged). One message at a time through that
//   NIC (incast): transmission = k·(push + pulls per node·pull bytes)/B, overhead = α per
//   message. Synchronous (token queues, an accumulator of N gradients): a node's pulls wait
//   for every push. Asynchronous (sync false, or staleness > 0 whose bound never binds within
//   the one step priced here): node n's pulls follow its own push, so pushes in and pulls out
//   overlap, push + (k−1)·max(push, pulls) + pulls over the k nodes (the steady state of
//   desynchronized workers); convergence per step is not modelled. A server serves its shards
//   one at a time in gradient-ready order. Sparse gradients carry rows_touched·(row bytes + 8 B
//   index): a node's push the rows of its share of the batch, a GPU's pull its own rows (no
//   proxy: AutoDist replicates dense variables only). Each node's own NIC bounds its pushes
//   and pulls: (bytes it sends to + receives from other nodes' servers)/B.
// * All-reduce, per group: one collective of the group's dense bytes (fp16 compression halves
//   fp32 gradients) over all W GPUs with costmodel::collective_time (or the chosen algorithm),
//   plus an all-gather of W·(rows_touched·(row bytes + 8)) for each sparse member (Horovod's
//   IndexedSlices path). overhead = the time of a 0-byte collective (its α terms), transmission
//   = the rest of the collectives' time; a group with compressed members adds cast_s, its
//   fp32 -> fp16 -> fp32 casts (compression.hpp), before and after its collective on the same
//   stream. Groups run one after another (one NCCL stream) once all members are ready.
// * Aggregations (AutoSync's features): max and sum over PS servers and over AR groups.
// * Iteration = forward + max(backward, end of the last transfer); PS and all-reduce transfers
//   proceed concurrently. The optimizer step is not included (it is the same work for every
//   strategy of a model).
// * Contention terms (not in the iteration above; the learned rankers' features): the model
//   above sends a shard's push and pull one after the other through the server's NIC and lets
//   PS and all-reduce transfers each have the whole NIC. A NIC is full duplex and shared:
//   - ps_duplex_end_s: each server pipelines its shards, shard k's pulls (out) overlapping
//     shard k+1's pushes (in): push_end_k = max(push_end_k−1, ready_k) + reduce_s + k·push,
//     pull_end_k = max(pull_end_k−1, push_end_k) + k·pulls + exposed read_s (async: the first
//     node's pulls start after its own push), the latest pull end;
//   - nic_ps_max_s: the busiest node NIC's PS bytes in one direction / B: in, the pushes it
//     serves plus the pulls its own GPUs (or proxy) receive; out, the pulls it serves plus its
//     own node's pushes;
//   - nic_max_s: nic_ps_max_s plus every all-reduce group's transmission, which crosses every
//     node's NIC: a lower bound on the time the sync keeps the busiest NIC busy;
//   - duplex_iteration_s: forward + max(backward, ps_duplex_end_s, the all-reduce stream's
//     end, the first gradient's ready time + nic_max_s).
// * Parallel-sender terms (features too): the model above pays one α per sender and message,
//   as if a server took its messages one at a time. A worker has its own connection (lane) to
//   each server, so a shard's pushes from all senders travel at once and pay α once, and so do
//   its pulls; a shard's pulls wait for all its pushes and the next shard's pushes wait for
//   them (one lane carries both). Where α dominates (fast NICs, small shards, many GPUs:
//   dgx-a100's 4 µs × 24 remote senders) this is what separates strategies:
//   - ps_lane_end_s: per server, a round each way, push: α + max(k·push bytes/B, push
//     bytes/B_nic), pull: α + max(all pull bytes/B, pull bytes/B_nic) (the incast shares the
//     server's NICs, one flow gets at most one NIC, B_nic = nic_bw·efficiency),
//     end_k = max(end_k−1, ready_k) + local_s + push round + pull round; the latest end;
//   - lane_iteration_s: forward + max(backward, ps_lane_end_s, the all-reduce stream's end).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/graph.hpp"
#include "autoddl/sync/strategy.hpp"

namespace autoddl::sync {

struct ServerTerms {
  int node = 0;
  int shards = 0;
  double bytes_in = 0;   // through the server node's NIC, pushes
  double bytes_out = 0;  // pulls
  double transmission_s = 0, overhead_s = 0, local_s = 0;
  double time_s = 0;     // sum of the three
  double end_s = 0;      // from the start of backward
};

struct GroupTerms {
  int group = 0;
  int members = 0;       // variable shards in the collective
  double dense_bytes = 0;
  double sparse_gather_bytes = 0;
  std::string algorithm;  // what ran ("ring", "tree", ...)
  double transmission_s = 0, overhead_s = 0;
  double compressed_fp32_bytes = 0;  // members' fp32 bytes sent as fp16 (dense_bytes has half)
  double cast_s = 0;                 // their casts (compression.hpp)
  double time_s = 0;                 // transmission + overhead + cast
  double ready_s = 0, end_s = 0;  // from the start of backward
};

struct Evaluation {
  int workers = 1;
  double forward_s = 0, backward_s = 0;
  std::vector<ServerTerms> servers;  // only nodes that serve something
  std::vector<GroupTerms> groups;    // in execution order
  double ps_max_s = 0, ps_sum_s = 0, ar_max_s = 0, ar_sum_s = 0;
  double worker_nic_s = 0;  // the busiest node's own PS pushes + pulls (its GPUs' or proxy's)
  double sync_end_s = 0;    // end of the last transfer, from the start of backward
  double exposed_sync_s = 0;
  double iteration_s = 0;
  // Contention terms (above)
  double ps_duplex_end_s = 0, nic_ps_max_s = 0, nic_max_s = 0, duplex_iteration_s = 0;
  // Parallel-sender terms (above)
  double ps_lane_end_s = 0, lane_iteration_s = 0;
};

// When each gradient becomes ready, from the start of backward, and when the backward ends:
// what the transfers overlap. The compute model above gives one (analytical_timeline); a
// scheme's cost model gives another (scheme_sync.hpp).
struct SyncTimeline {
  double forward_s = 0, backward_s = 0;
  std::vector<double> ready_s;  // per variable, indexed like `vars`
};

// The compute model above: every op's work over all GPUs of `c`.
SyncTimeline analytical_timeline(const costmodel::Graph& g, const std::vector<Variable>& vars,
                                 const costmodel::ClusterSpec& c);

// `s` must have passed validate_strategy for `vars` (extract_variables(g)) and `c`. Throws
// InputError("strategy", "group N", reason) for an algorithm that does not apply to the cluster.
Evaluation evaluate_analytical(const costmodel::Graph& g, const std::vector<Variable>& vars,
                               const Strategy& s, const costmodel::ClusterSpec& c);
// The same transfers over a given timeline (t.ready_s.size() == vars.size()).
Evaluation evaluate_analytical(const std::vector<Variable>& vars, const Strategy& s,
                               const costmodel::ClusterSpec& c, const SyncTimeline& t);

// Every field, seconds as "_s", bytes as "_bytes" (docs/sync-strategy-json.md, "Evaluation").
nlohmann::json evaluation_to_json(const Evaluation& e);

}  // namespace autoddl::sync
