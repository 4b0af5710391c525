// The formulas are in analytical.hpp's header comment.
#include "autoddl/sync/analytical.hpp"

#include <algorithm>
#include <map>
#include <numeric>

#include "autoddl/costmodel/collective.hpp"
#include "autoddl/costmodel/compute.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/sync/compression.hpp"

namespace autoddl::sync {

using namespace costmodel;

namespace {

constexpr double kIndexBytes = 8;  // int64 row index per touched row

// Per-op forward time and the time from the start of backward until op i's backward is done.
struct ComputeTimeline {
  double forward_s = 0, backward_s = 0;
  std::vector<double> bwd_done_s;  // by op index
};

ComputeTimeline compute_timeline(const Graph& g, const ClusterSpec& c, int workers) {
  ComputeTimeline t;
  t.bwd_done_s.assign(g.ops.size(), 0);
  const double w = workers;
  for (const Op& op : g.ops) t.forward_s += op_kernel_times(c.gpu, g, op, 1 / w).fwd_s;
  for (int i = static_cast<int>(g.ops.size()) - 1; i >= 0; --i) {
    const Op& op = g.ops[static_cast<size_t>(i)];
    t.backward_s += op_kernel_times(c.gpu, g, op, 1 / w).bwd_s;
    t.bwd_done_s[static_cast<size_t>(i)] = t.backward_s;
  }
  return t;
}

// One synchronized piece: a whole variable or one shard.
struct Piece {
  const Variable* var;
  const Synchronizer* sync;
  double fraction;  // of the variable's elements
  double ready_s;
};

// Bytes one sender carries for a piece when `senders` split the global batch.
double sender_bytes(const Piece& p, int senders) {
  const Variable& v = *p.var;
  if (!v.sparse) return v.bytes * p.fraction;
  return v.rows_touched(senders) * p.fraction * (v.row_bytes() + kIndexBytes);
}

double all_reduce_s(const ClusterSpec& c, ArAlgorithm algo, const CommGroup& grp, double bytes,
                    int group, std::string& used) {
  if (algo == ArAlgorithm::automatic) {
    CollectiveEstimate e = nccl_collective_time(c, CollectiveKind::all_reduce, grp, bytes);
    used = collective_algo_name(e.algo);
    return e.time_s;
  }
  CollectiveAlgo a = algo == ArAlgorithm::ring   ? CollectiveAlgo::ring
                     : algo == ArAlgorithm::tree ? CollectiveAlgo::tree
                                                 : CollectiveAlgo::hierarchical;
  double t = collective_algo_time_s(c, CollectiveKind::all_reduce, a, grp, bytes);
  if (t < 0) {
    throw InputError("strategy", "group " + std::to_string(group),
                     "all-reduce algorithm '" + std::string(algorithm_name(algo)) +
                         "' does not apply to " + std::to_string(grp.ranks) + " GPUs on " +
                         std::to_string(grp.nodes()) + " node(s) of " + c.name);
  }
  used = algorithm_name(algo);
  return t;
}

}  // namespace

SyncTimeline analytical_timeline(const Graph& g, const std::vector<Variable>& vars, const ClusterSpec& c) {
  ComputeTimeline ct = compute_timeline(g, c, c.total_gpus());
  SyncTimeline t;
  t.forward_s = ct.forward_s;
  t.backward_s = ct.backward_s;
  for (const Variable& v : vars) {
    t.ready_s.push_back(ct.bwd_done_s.empty() ? 0
                                              : ct.bwd_done_s[static_cast<size_t>(std::min<int>(
                                                    v.first_reader, static_cast<int>(g.ops.size()) - 1))]);
  }
  return t;
}

Evaluation evaluate_analytical(const Graph& g, const std::vector<Variable>& vars, const Strategy& s,
                               const ClusterSpec& c) {
  return evaluate_analytical(vars, s, c, analytical_timeline(g, vars, c));
}

Evaluation evaluate_analytical(const std::vector<Variable>& vars, const Strategy& s, const ClusterSpec& c,
                               const SyncTimeline& t) {
  AUTODDL_CHECK(t.ready_s.size() == vars.size()) << "a timeline needs one ready time per variable";
  Evaluation ev;
  ev.workers = c.total_gpus();
  const int W = ev.workers, G = c.gpus_per_node, N = c.nodes;
  ev.forward_s = t.forward_s;
  ev.backward_s = t.backward_s;

  std::map<std::string, size_t> by_name;
  for (size_t i = 0; i < vars.size(); ++i) by_name[vars[i].name] = i;
  std::vector<Piece> pieces;
  for (const VarConfig& vc : s.vars) {
    const size_t vi = by_name.at(vc.var);
    const Variable& v = vars[vi];
    for (int i = 0; i < vc.shards; ++i)
      pieces.push_back({&v, &vc.parts[static_cast<size_t>(i)], shard_fraction(v, vc, i), t.ready_s[vi]});
  }
  // Gradient-ready order (stable: strategy order among equals).
  std::stable_sort(pieces.begin(), pieces.end(),
                   [](const Piece& a, const Piece& b) { return a.ready_s < b.ready_s; });

  double end_s = 0, duplex_end = 0, lane_end_all = 0;
  if (W > 1) {
    const double bw = c.node_nic_bw_bytes_per_s(), alpha = c.inter.latency_s;
    const CommGroup all = contiguous_group(c, W);
    // ---- PS ----
    std::map<int, ServerTerms> servers;
    std::vector<double> node_push_bytes(static_cast<size_t>(N), 0.0);
    std::map<int, std::pair<double, double>> duplex;  // server: (push end, pull end)
    std::map<int, double> lane_end;                   // server: end of its last round
    const double one_nic_bw = c.inter.nic_bw_bytes_per_s * c.inter.efficiency;
    double first_ready = -1;
    for (const Piece& p : pieces) {
      if (p.sync->arch != Arch::ps) continue;
      const bool local = p.sync->local_replication;
      const int senders = local ? N : W;
      const int remote = local ? N - 1 : W - G;
      const double b = sender_bytes(p, senders);
      ServerTerms& st = servers[p.sync->server];
      st.node = p.sync->server;
      st.shards += 1;
      st.bytes_in += remote * b;
      st.bytes_out += remote * b;
      const double transmission = 2 * remote * b / bw, overhead = 2 * remote * alpha;
      const double local_s =
          local && G > 1 ? nccl_collective_time(c, CollectiveKind::all_reduce, CommGroup{G, G}, b).time_s : 0;
      st.transmission_s += transmission;
      st.overhead_s += overhead;
      st.local_s += local_s;
      st.time_s += transmission + overhead + local_s;
      st.end_s = std::max(st.end_s, p.ready_s) + transmission + overhead + local_s;
      auto& [push_end, pull_end] = duplex[p.sync->server];
      push_end = std::max(push_end, p.ready_s) + local_s + (transmission + overhead) / 2;
      pull_end = std::max(pull_end, push_end) + (transmission + overhead) / 2;
      ev.ps_duplex_end_s = std::max(ev.ps_duplex_end_s, pull_end);
      // One round each way; the senders' messages travel at once (one lane per sender).
      const double round_s = alpha + std::max(remote * b / bw, b / one_nic_bw);
      double& lane = lane_end[p.sync->server];
      lane = std::max(lane, p.ready_s) + local_s + 2 * round_s;
      ev.ps_lane_end_s = std::max(ev.ps_lane_end_s, lane);
      if (first_ready < 0 || p.ready_s < first_ready) first_ready = p.ready_s;
      for (int n = 0; n < N; ++n) {
        if (n != p.sync->server) node_push_bytes[static_cast<size_t>(n)] += (local ? 1 : G) * b;
      }
    }
    for (auto& [node, st] : servers) {
      ev.ps_max_s = std::max(ev.ps_max_s, st.time_s);
      ev.ps_sum_s += st.time_s;
      end_s = std::max(end_s, st.end_s);
      ev.servers.push_back(st);
    }
    if (!servers.empty()) {
      for (double bytes : node_push_bytes) ev.worker_nic_s = std::max(ev.worker_nic_s, 2 * bytes / bw);
      end_s = std::max(end_s, ev.worker_nic_s);
      for (int n = 0; n < N; ++n) {
        auto it = servers.find(n);
        const double served = it == servers.end() ? 0 : it->second.bytes_in;
        ev.nic_ps_max_s = std::max(ev.nic_ps_max_s, (served + node_push_bytes[static_cast<size_t>(n)]) / bw);
      }
    }
    // ---- all-reduce groups ----
    std::map<int, GroupTerms> groups;
    std::map<int, ArAlgorithm> algos;
    for (const Piece& p : pieces) {
      if (p.sync->arch != Arch::all_reduce) continue;
      GroupTerms& gt = groups[p.sync->group];
      gt.group = p.sync->group;
      gt.members += 1;
      gt.ready_s = std::max(gt.ready_s, p.ready_s);
      algos[p.sync->group] = p.sync->algorithm;
      if (p.var->sparse) {
        gt.sparse_gather_bytes += W * sender_bytes(p, W);
      } else {
        const DenseBytes b = dense_bytes(*p.sync, *p.var, p.var->bytes * p.fraction);
        gt.dense_bytes += b.wire;
        gt.compressed_fp32_bytes += b.cast_fp32;
      }
    }
    std::vector<GroupTerms> order;
    for (auto& [id, gt] : groups) {
      std::string used = "none";
      double time = 0, overhead = 0;
      if (gt.dense_bytes > 0) {
        time += all_reduce_s(c, algos[id], all, gt.dense_bytes, id, used);
        std::string ignored;
        overhead += all_reduce_s(c, algos[id], all, 0, id, ignored);
      }
      if (gt.sparse_gather_bytes > 0) {
        time += nccl_collective_time(c, CollectiveKind::all_gather, all, gt.sparse_gather_bytes).time_s;
        overhead += nccl_collective_time(c, CollectiveKind::all_gather, all, 0).time_s;
        if (gt.dense_bytes <= 0) used = "all_gather";
      }
      gt.algorithm = used;
      gt.overhead_s = overhead;
      gt.transmission_s = time - overhead;
      gt.cast_s = fp16_cast_s(c.gpu, gt.compressed_fp32_bytes);
      time += gt.cast_s;
      gt.time_s = time;
      ev.nic_max_s += gt.transmission_s;
      ev.ar_max_s = std::max(ev.ar_max_s, time);
      ev.ar_sum_s += time;
      order.push_back(gt);
    }
    std::stable_sort(order.begin(), order.end(), [](const GroupTerms& a, const GroupTerms& b) {
      return a.ready_s < b.ready_s;
    });
    double stream_free = 0;
    for (GroupTerms& gt : order) {
      gt.end_s = std::max(stream_free, gt.ready_s) + gt.time_s;
      stream_free = gt.end_s;
      end_s = std::max(end_s, gt.end_s);
      if (first_ready < 0 || gt.ready_s < first_ready) first_ready = gt.ready_s;
    }
    ev.groups = std::move(order);
    ev.nic_max_s += ev.nic_ps_max_s;
    duplex_end = std::max({ev.ps_duplex_end_s, stream_free, std::max(0.0, first_ready) + ev.nic_max_s});
    lane_end_all = std::max(ev.ps_lane_end_s, stream_free);
  }
  ev.sync_end_s = end_s;
  ev.iteration_s = ev.forward_s + std::max(ev.backward_s, end_s);
  ev.exposed_sync_s = ev.iteration_s - ev.forward_s - ev.backward_s;
  ev.duplex_iteration_s = ev.forward_s + std::max(ev.backward_s, duplex_end);
  ev.lane_iteration_s = ev.forward_s + std::max(ev.backward_s, lane_end_all);
  return ev;
}

}  // namespace autoddl::sync
