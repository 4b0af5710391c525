// The formulas are in analytical.hpp's header comment.
#include "autoddl/sync/analytical.hpp"

#include <algorithm>
#include <map>
#include <numeric>

#include "autoddl/costmodel/collective.hpp"
#include "autoddl/costmodel/compute.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/sync/compression.hpp"
#include "ps_flows.hpp"

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
    // ---- PS ---- (flows: ps_flows.hpp)
    std::map<int, ServerTerms> servers;
    // Per node, its own PS traffic through its NIC: out = its pushes, in = its pulls.
    std::vector<double> node_out_bytes(static_cast<size_t>(N), 0.0), node_in_bytes(static_cast<size_t>(N), 0.0);
    std::map<int, std::pair<double, double>> duplex;  // server: (push end, pull end)
    std::map<int, double> lane_end;                   // server: end of its last round
    const double one_nic_bw = c.inter.nic_bw_bytes_per_s * c.inter.efficiency;
    const CommGroup node_group{G, G};
    auto intra_s = [&](CollectiveKind kind, double bytes) {
      return G > 1 && bytes > 0 ? nccl_collective_time(c, kind, node_group, bytes).time_s : 0.0;
    };
    const int k = N - 1;  // worker nodes whose push and pulls cross the server's NIC
    double first_ready = -1;
    for (const Piece& p : pieces) {
      if (p.sync->arch != Arch::ps) continue;
      const detail::PsShardFlows f = detail::ps_shard_flows(*p.var, p.fraction, *p.sync, N, G);
      // One node's push, and one node's pulls (one per GPU without a proxy), each way α-β.
      const double push_tx = f.push_bytes / bw, push_ov = alpha;
      const double pull_tx = f.pulls_per_node * f.pull_bytes / bw, pull_ov = f.pulls_per_node * alpha;
      // k nodes one after another; async: node n's pull follows its own push, so the server's
      // incoming pushes and outgoing pulls overlap (a two-stage pipeline over k nodes).
      auto through_nic = [&](double push, double pull) {
        if (k == 0) return 0.0;
        return f.async ? push + (k - 1) * std::max(push, pull) + pull : k * (push + pull);
      };
      const double transmission = through_nic(push_tx, pull_tx), overhead = through_nic(push_ov, pull_ov);
      const double reduce_s = intra_s(f.reduce_kind, f.reduce_bytes), read_s = intra_s(CollectiveKind::all_gather, f.read_bytes);
      // A proxy's reads follow its node's pull; without one, only the server node's GPUs read
      // inside a node, while the remote pulls run.
      const double pulls_nic_s = k * (pull_tx + pull_ov);
      const double read_exposed_s = f.proxy ? read_s : std::max(0.0, read_s - pulls_nic_s);
      const double local_s = reduce_s + read_exposed_s;
      ServerTerms& st = servers[p.sync->server];
      st.node = p.sync->server;
      st.shards += 1;
      st.bytes_in += k * f.push_bytes;
      st.bytes_out += k * f.pulls_per_node * f.pull_bytes;
      st.transmission_s += transmission;
      st.overhead_s += overhead;
      st.local_s += local_s;
      st.time_s += transmission + overhead + local_s;
      st.end_s = std::max(st.end_s, p.ready_s) + transmission + overhead + local_s;
      // Full duplex: pushes in, pulls out; the next shard's pushes overlap this one's pulls.
      auto& [push_end, pull_end] = duplex[p.sync->server];
      const double push_begin = std::max(push_end, p.ready_s) + reduce_s;
      const double push = push_tx + push_ov, pull = pull_tx + pull_ov;
      push_end = push_begin + k * push;
      pull_end = f.async && k > 0 ? std::max(std::max(pull_end, push_begin + push) + k * pull, push_end + pull)
                                  : std::max(pull_end, push_end) + k * pull;
      pull_end += read_exposed_s;
      ev.ps_duplex_end_s = std::max(ev.ps_duplex_end_s, pull_end);
      // One round each way; the nodes' messages travel at once (one lane per sender).
      const double push_round = k == 0 ? 0 : alpha + std::max(k * f.push_bytes / bw, f.push_bytes / one_nic_bw);
      const double pull_round =
          k == 0 ? 0 : alpha + std::max(k * f.pulls_per_node * f.pull_bytes / bw, f.pull_bytes / one_nic_bw);
      double& lane = lane_end[p.sync->server];
      lane = std::max(lane, p.ready_s) + local_s + push_round + pull_round;
      ev.ps_lane_end_s = std::max(ev.ps_lane_end_s, lane);
      if (first_ready < 0 || p.ready_s < first_ready) first_ready = p.ready_s;
      for (int n = 0; n < N; ++n) {
        if (n == p.sync->server) continue;
        node_out_bytes[static_cast<size_t>(n)] += f.push_bytes;
        node_in_bytes[static_cast<size_t>(n)] += f.pulls_per_node * f.pull_bytes;
      }
    }
    for (auto& [node, st] : servers) {
      ev.ps_max_s = std::max(ev.ps_max_s, st.time_s);
      ev.ps_sum_s += st.time_s;
      end_s = std::max(end_s, st.end_s);
      ev.servers.push_back(st);
    }
    if (!servers.empty()) {
      for (int n = 0; n < N; ++n) {
        const size_t i = static_cast<size_t>(n);
        ev.worker_nic_s = std::max(ev.worker_nic_s, (node_out_bytes[i] + node_in_bytes[i]) / bw);
      }
      end_s = std::max(end_s, ev.worker_nic_s);
      for (int n = 0; n < N; ++n) {
        const size_t i = static_cast<size_t>(n);
        auto it = servers.find(n);
        const double served_in = it == servers.end() ? 0 : it->second.bytes_in;
        const double served_out = it == servers.end() ? 0 : it->second.bytes_out;
        ev.nic_ps_max_s = std::max(
            {ev.nic_ps_max_s, (served_in + node_in_bytes[i]) / bw, (served_out + node_out_bytes[i]) / bw});
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
