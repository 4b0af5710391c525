// The lowering is described in simulated.hpp's header comment.
#ifdef AUTODDL_SYNC_HAVE_SIM
#include "autoddl/sync/simulated.hpp"

#include <algorithm>
#include <map>
#include <random>

#include "autoddl/costmodel/collective.hpp"
#include "autoddl/costmodel/compute.hpp"
#include "autoddl/sim/program.hpp"
#include "autoddl/sim/simulate.hpp"

namespace autoddl::sync {

using namespace costmodel;

namespace {

constexpr double kIndexBytes = 8;

struct Jitter {
  std::mt19937_64 rng;
  std::normal_distribution<double> normal{0.0, 1.0};
  double factor(double sigma) { return sigma > 0 ? std::max(0.5, 1 + sigma * normal(rng)) : 1.0; }
};

struct Piece {
  const Variable* var;
  const Synchronizer* sync;
  double fraction;
  int ready_point;  // index into the backward segments
};

double sender_bytes(const Piece& p, int senders) {
  const Variable& v = *p.var;
  if (!v.sparse) return v.bytes * p.fraction;
  return v.rows_touched(senders) * p.fraction * (v.row_bytes() + kIndexBytes);
}

CollectiveAlgo chosen_algo(const ClusterSpec& c, ArAlgorithm a, const CommGroup& grp, double bytes) {
  switch (a) {
    case ArAlgorithm::ring: return CollectiveAlgo::ring;
    case ArAlgorithm::tree: return CollectiveAlgo::tree;
    case ArAlgorithm::hierarchical: return CollectiveAlgo::hierarchical;
    case ArAlgorithm::automatic: break;
  }
  CollectiveAlgo picked = collective_time(c, CollectiveKind::all_reduce, grp, bytes).algo;
  return picked == CollectiveAlgo::calibrated ? CollectiveAlgo::ring : picked;
}

}  // namespace

SimSyncResult simulate_strategy(const Graph& g, const std::vector<Variable>& vars, const Strategy& s,
                                const ClusterSpec& c, const SimSyncOptions& options) {
  const int W = c.total_gpus(), G = c.gpus_per_node, N = c.nodes;
  Jitter jitter{std::mt19937_64(options.seed)};

  // Backward ready points: the distinct first readers, latest op first (backward order).
  std::vector<int> points;
  for (const Variable& v : vars) points.push_back(std::min<int>(v.first_reader, static_cast<int>(g.ops.size()) - 1));
  std::sort(points.begin(), points.end(), std::greater<>());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  std::map<int, int> point_of_op;
  for (size_t i = 0; i < points.size(); ++i) point_of_op[points[i]] = static_cast<int>(i);

  // Per-op times as the analytical evaluator computes them; segment i ends at op points[i].
  double forward_s = 0;
  std::vector<double> segment_s(points.size() + 1, 0.0);  // the last one: after the last point
  {
    size_t seg = 0;
    for (int i = static_cast<int>(g.ops.size()) - 1; i >= 0; --i) {
      const Op& op = g.ops[static_cast<size_t>(i)];
      segment_s[seg] += op_kernel_times(c.gpu, g, op, 1.0 / W).bwd_s;
      if (seg < points.size() && i == points[seg]) ++seg;
    }
    for (const Op& op : g.ops) forward_s += op_kernel_times(c.gpu, g, op, 1.0 / W).fwd_s;
  }

  // Streams 0/1: compute and all-reduce; then one PS lane per (worker, server node) pair, the
  // same index on both ends, so a worker talks to all servers at once and a server hears from
  // all workers at once (only streams with tasks get a SimGrid actor).
  sim::Program p(W, 2 + W * N);
  auto lane = [N](int worker, int server_node) { return 2 + worker * N + server_node; };
  std::vector<std::vector<sim::TaskId>> ready(static_cast<size_t>(W));  // [device][point]
  for (int d = 0; d < W; ++d) {
    p.compute_seconds(d, forward_s * jitter.factor(options.compute_jitter), {.phase = sim::Phase::forward, .name = "forward"});
    for (size_t k = 0; k < segment_s.size(); ++k) {
      sim::TaskId t = p.compute_seconds(d, segment_s[k] * jitter.factor(options.compute_jitter),
                                        {.phase = sim::Phase::backward, .name = "backward " + std::to_string(k)});
      if (k < points.size()) ready[static_cast<size_t>(d)].push_back(t);
    }
  }

  std::map<std::string, const Variable*> by_name;
  for (const Variable& v : vars) by_name[v.name] = &v;
  std::vector<Piece> pieces;
  for (const VarConfig& vc : s.vars) {
    const Variable& v = *by_name.at(vc.var);
    int pt = point_of_op.at(std::min<int>(v.first_reader, static_cast<int>(g.ops.size()) - 1));
    for (int i = 0; i < vc.shards; ++i)
      pieces.push_back({&v, &vc.parts[static_cast<size_t>(i)], shard_fraction(v, vc, i), pt});
  }
  std::stable_sort(pieces.begin(), pieces.end(),
                   [](const Piece& a, const Piece& b) { return a.ready_point < b.ready_point; });

  SimSyncResult result;
  if (W > 1) {
    const CommGroup all = contiguous_group(c, W);
    std::vector<int> everyone(static_cast<size_t>(W));
    for (int d = 0; d < W; ++d) everyone[static_cast<size_t>(d)] = d;
    auto deps_at = [&](int point) {
      std::vector<sim::TaskId> deps;
      for (int d = 0; d < W; ++d) deps.push_back(ready[static_cast<size_t>(d)][static_cast<size_t>(point)]);
      return deps;
    };
    // Emission in ready order keeps every dependency on earlier tasks (program.hpp).
    struct Group {
      int ready_point = 0;
      double dense = 0, gather = 0;
      ArAlgorithm algo = ArAlgorithm::automatic;
    };
    std::map<int, Group> groups;
    for (const Piece& pc : pieces) {
      if (pc.sync->arch != Arch::all_reduce) continue;
      Group& gr = groups[pc.sync->group];
      gr.ready_point = std::max(gr.ready_point, pc.ready_point);
      gr.algo = pc.sync->algorithm;
      if (pc.var->sparse) {
        gr.gather += W * sender_bytes(pc, W);
      } else {
        const bool halve = pc.sync->compressor == Compressor::fp16 && pc.var->dtype == DType::fp32;
        gr.dense += pc.var->bytes * pc.fraction * (halve ? 0.5 : 1.0);
      }
    }
    std::vector<std::pair<int, int>> group_order;  // (ready point, group id)
    for (auto& [id, gr] : groups) group_order.emplace_back(gr.ready_point, id);
    std::sort(group_order.begin(), group_order.end());

    size_t next_group = 0;
    auto emit_groups_until = [&](int point) {
      while (next_group < group_order.size() && group_order[next_group].first <= point) {
        const Group& gr = groups[group_order[next_group].second];
        std::vector<sim::TaskId> deps = deps_at(gr.ready_point);
        std::string name = "group " + std::to_string(group_order[next_group].second);
        if (gr.dense > 0) {
          double bytes = gr.dense * jitter.factor(options.network_jitter);
          p.collective(CollectiveKind::all_reduce, everyone, bytes, chosen_algo(c, gr.algo, all, bytes),
                       {.deps = deps, .phase = sim::Phase::grad_sync, .name = name});
          ++result.transfers;
        }
        if (gr.gather > 0) {
          p.collective(CollectiveKind::all_gather, everyone, gr.gather * jitter.factor(options.network_jitter),
                       CollectiveAlgo::ring, {.deps = deps, .phase = sim::Phase::grad_sync, .name = name + " sparse"});
          ++result.transfers;
        }
        ++next_group;
      }
    };
    for (const Piece& pc : pieces) {
      emit_groups_until(pc.ready_point - 1);
      if (pc.sync->arch != Arch::ps) continue;
      const bool local = pc.sync->local_replication;
      const int server = pc.sync->server * G;
      const double b = sender_bytes(pc, local ? N : W);
      std::vector<int> senders;
      for (int d = 0; d < W; ++d) {
        if (d / G == pc.sync->server) continue;  // same node: no NIC crossing
        if (local && d % G != 0) continue;       // the node's proxy pushes for it
        senders.push_back(d);
      }
      std::vector<sim::TaskId> pushes;
      for (int w : senders) {
        pushes.push_back(p.send_recv(w, server, b * jitter.factor(options.network_jitter),
                                     {.deps = {ready[static_cast<size_t>(w)][static_cast<size_t>(pc.ready_point)]},
                                      .phase = sim::Phase::grad_sync, .stream = lane(w, pc.sync->server),
                                      .name = "push " + pc.var->name}));
      }
      for (int w : senders) {
        p.send_recv(server, w, b * jitter.factor(options.network_jitter),
                    {.deps = pushes, .phase = sim::Phase::grad_sync, .stream = lane(w, pc.sync->server), .name = "pull " + pc.var->name});
      }
      result.transfers += 2 * static_cast<int64_t>(senders.size());
    }
    emit_groups_until(static_cast<int>(points.size()));
  }

  sim::SimOptions so;
  so.fidelity = options.flow_fidelity ? sim::Fidelity::flow : sim::Fidelity::step;
  so.dtype = vars.empty() ? DType::fp32 : vars.front().dtype;
  sim::SimResult r = sim::simulate(p, c, so);
  result.iteration_s = r.iteration_s;
  result.compute_s = r.compute_s;
  result.exposed_comm_s = r.exposed_comm_s;
  result.wall_s = r.wall_s;
  return result;
}

}  // namespace autoddl::sync
#endif
