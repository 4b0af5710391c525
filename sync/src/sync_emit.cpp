// The lowering is described in sync_emit.hpp's header comment.
#ifdef AUTODDL_SYNC_HAVE_SIM
#include "sync_emit.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "autoddl/costmodel/collective.hpp"
#include "autoddl/sync/compression.hpp"
#include "ps_flows.hpp"

namespace autoddl::sync::detail {

using namespace costmodel;

namespace {

constexpr double kIndexBytes = 8;

struct Piece {
  const Variable* var;
  int var_index;
  const Synchronizer* sync;
  double fraction;
  double order;
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

SyncEmitResult emit_strategy_sync(sim::Program& p, const SyncGroupLayout& L, const SyncEmitInput& in) {
  const std::vector<Variable>& vars = *in.vars;
  const ClusterSpec& c = *in.cluster;
  const int W = static_cast<int>(L.devices.size()), N = L.nodes, G = L.ranks_per_node;
  SyncEmitResult out;
  if (W <= 1) return out;
  auto factor = [&] { return in.bytes_factor ? in.bytes_factor() : 1.0; };
  auto emitted = [&](sim::TaskId id, double expected_s) {
    out.tasks.push_back(id);
    out.expected_s.push_back(expected_s);
  };
  auto add = [&](sim::TaskId id, double expected_s) {
    emitted(id, expected_s);
    ++out.transfers;
  };

  std::unordered_map<std::string, int> index_of;
  for (size_t i = 0; i < vars.size(); ++i) index_of[vars[i].name] = static_cast<int>(i);
  std::vector<Piece> pieces;
  for (const VarConfig& vc : in.strategy->vars) {
    const int vi = index_of.at(vc.var);
    const Variable& v = vars[static_cast<size_t>(vi)];
    for (int i = 0; i < vc.shards; ++i)
      pieces.push_back({&v, vi, &vc.parts[static_cast<size_t>(i)], shard_fraction(v, vc, i),
                        in.order[static_cast<size_t>(vi)]});
  }
  std::stable_sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) { return a.order < b.order; });

  const CommGroup all = contiguous_group(c, W);
  struct Group {
    double order = 0;
    int last_var = -1;  // the member ready last: its ready tasks release the group
    double dense = 0, gather = 0;
    double compressed_fp32 = 0;  // members' fp32 bytes sent as fp16 (half of it is in dense)
    ArAlgorithm algo = ArAlgorithm::automatic;
  };
  std::map<int, Group> groups;
  for (const Piece& pc : pieces) {
    if (pc.sync->arch != Arch::all_reduce) continue;
    Group& gr = groups[pc.sync->group];
    if (gr.last_var < 0 || pc.order >= gr.order) {
      gr.order = pc.order;
      gr.last_var = pc.var_index;
    }
    gr.algo = pc.sync->algorithm;
    if (pc.var->sparse) {
      gr.gather += W * sender_bytes(pc, W);
    } else {
      const DenseBytes b = dense_bytes(*pc.sync, *pc.var, pc.var->bytes * pc.fraction);
      gr.dense += b.wire;
      gr.compressed_fp32 += b.cast_fp32;
    }
  }
  std::vector<std::pair<double, int>> group_order;  // (order, group id)
  for (auto& [id, gr] : groups) group_order.emplace_back(gr.order, id);
  std::sort(group_order.begin(), group_order.end());

  size_t next_group = 0;
  auto emit_groups_before = [&](double order, bool all_left) {
    while (next_group < group_order.size() && (all_left || group_order[next_group].first < order)) {
      const Group& gr = groups[group_order[next_group].second];
      std::vector<sim::TaskId> deps;
      for (int r = 0; r < W; ++r) deps.push_back(in.ready(r, gr.last_var));
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
      const std::string name = "group " + std::to_string(group_order[next_group].second);
      // Compression's casts (compression.hpp): half of fp16_cast_s on every rank before the
      // collective, on its stream once the group is ready there, and half after it. Not
      // jittered, so a strategy's draws do not depend on whether it compresses.
      const double cast_s = fp16_cast_s(c.gpu, gr.compressed_fp32) / 2;
      // after(r): what rank r's cast waits for.
      auto casts = [&](const auto& after, const char* what) {
        std::vector<sim::TaskId> ids;
        for (int r = 0; r < W; ++r) {
          ids.push_back(p.compute_seconds(L.devices[static_cast<size_t>(r)], cast_s,
                                          {.deps = {after(r)}, .phase = L.phase, .stream = L.ar_stream,
                                           .name = name + what, .stage = L.stage}));
          emitted(ids.back(), cast_s);
        }
        return ids;
      };
      if (cast_s > 0) deps = casts([&](int r) { return in.ready(r, gr.last_var); }, " fp16 cast");
      auto collective = [&](CollectiveKind kind, double bytes, CollectiveAlgo algo, const std::string& n) {
        sim::Task t;
        t.kind = sim::TaskKind::collective;
        t.phase = L.phase;
        t.stream = L.ar_stream;
        t.name = n;
        t.devices = L.devices;
        t.collective = kind;
        t.algo = algo;
        t.bytes = bytes;
        t.channels = L.channels;
        t.deps = deps;
        t.stage = L.stage;
        const sim::TaskId id = p.add(std::move(t));
        add(id, collective_algo_time_s(c, kind, algo, all, bytes));
        return id;
      };
      if (gr.dense > 0) {
        const double bytes = gr.dense * factor();
        const sim::TaskId ar = collective(CollectiveKind::all_reduce, bytes, chosen_algo(c, gr.algo, all, bytes), name);
        if (cast_s > 0) casts([ar](int) { return ar; }, " fp32 cast");
      }
      if (gr.gather > 0) collective(CollectiveKind::all_gather, gr.gather * factor(), CollectiveAlgo::ring, name + " sparse");
      ++next_group;
    }
  };

  const double nic_bw = c.node_nic_bw_bytes_per_s();
  const CommGroup node_group{G, G};
  // A node's GPUs, and the PS lane of rank r to server node s.
  auto node_devices = [&](int n) {
    return std::vector<int>(L.devices.begin() + n * G, L.devices.begin() + (n + 1) * G);
  };
  auto lane = [&](int r, int s) { return L.first_lane + r * N + s; };
  auto send = [&](int from, int to, double bytes, std::vector<sim::TaskId> deps, int stream, const std::string& n) {
    sim::TaskId id = p.send_recv(from, to, bytes,
                                 {.deps = std::move(deps), .phase = L.phase, .stream = stream, .name = n, .stage = L.stage});
    add(id, c.inter.latency_s + bytes / nic_bw);
    return id;
  };
  // An intra-node collective of node n on the lane of its first rank to `server` (so it queues
  // behind that node's earlier traffic to the same server, as its push does).
  auto node_collective = [&](int n, int server, CollectiveKind kind, double bytes, std::vector<sim::TaskId> deps,
                             const std::string& name) {
    const CollectiveAlgo algo = kind == CollectiveKind::all_reduce
                                    ? chosen_algo(c, ArAlgorithm::automatic, node_group, bytes)
                                    : CollectiveAlgo::ring;
    sim::Task t;
    t.kind = sim::TaskKind::collective;
    t.phase = L.phase;
    t.stream = lane(n * G, server);
    t.name = name;
    t.devices = node_devices(n);
    t.collective = kind;
    t.algo = algo;
    t.bytes = bytes;
    t.channels = L.channels;
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    t.deps = std::move(deps);
    t.stage = L.stage;
    const sim::TaskId id = p.add(std::move(t));
    add(id, collective_algo_time_s(c, kind, algo, node_group, bytes));
    return id;
  };
  for (const Piece& pc : pieces) {
    emit_groups_before(pc.order, false);
    if (pc.sync->arch != Arch::ps) continue;
    const PsShardFlows f = ps_shard_flows(*pc.var, pc.fraction, *pc.sync, N, G);
    const int node = pc.sync->server;
    const int server = L.devices[static_cast<size_t>(node * G)];
    const std::string& var = pc.var->name;
    // Every node sums its GPUs' gradients (on its first GPU, standing in for its CPU).
    std::vector<std::vector<sim::TaskId>> reduced(static_cast<size_t>(N));  // per node: what its push waits for
    for (int n = 0; n < N; ++n) {
      std::vector<sim::TaskId> ready;
      for (int r = n * G; r < (n + 1) * G; ++r) ready.push_back(in.ready(r, pc.var_index));
      if (G > 1 && f.reduce_bytes > 0) {
        reduced[static_cast<size_t>(n)] = {
            node_collective(n, node, f.reduce_kind, f.reduce_bytes * factor(), ready, "reduce " + var)};
      } else {
        reduced[static_cast<size_t>(n)] = ready;
      }
    }
    // One push per worker node, from its first rank; the server's own node does not cross the NIC.
    std::vector<sim::TaskId> pushes(static_cast<size_t>(N), sim::TaskId{});
    std::vector<sim::TaskId> applied = reduced[static_cast<size_t>(node)];  // sync: every push and the server node's sum
    for (int n = 0; n < N; ++n) {
      if (n == node) continue;
      const int r = n * G;
      pushes[static_cast<size_t>(n)] = send(L.devices[static_cast<size_t>(r)], server, f.push_bytes * factor(),
                                            reduced[static_cast<size_t>(n)], lane(r, node), "push " + var);
      applied.push_back(pushes[static_cast<size_t>(n)]);
    }
    for (int n = 0; n < N; ++n) {
      if (n == node) continue;
      // async: the node reads the shard once its own push is applied.
      const std::vector<sim::TaskId> after = f.async ? std::vector<sim::TaskId>{pushes[static_cast<size_t>(n)]} : applied;
      if (f.proxy) {
        const int r = n * G;
        const sim::TaskId pull =
            send(server, L.devices[static_cast<size_t>(r)], f.pull_bytes * factor(), after, lane(r, node), "pull " + var);
        node_collective(n, node, CollectiveKind::all_gather, f.read_bytes * factor(), {pull}, "proxy read " + var);
      } else {
        for (int r = n * G; r < (n + 1) * G; ++r)
          send(server, L.devices[static_cast<size_t>(r)], f.pull_bytes * factor(), after, lane(r, node), "pull " + var);
      }
    }
    // The server node's GPUs read the updated shard from its CPU.
    if (G > 1 && f.read_bytes > 0) {
      const std::vector<sim::TaskId> after = f.async ? reduced[static_cast<size_t>(node)] : applied;
      node_collective(node, node, CollectiveKind::all_gather, f.read_bytes * factor(), after, "read " + var);
    }
  }
  emit_groups_before(0, true);
  return out;
}

}  // namespace autoddl::sync::detail
#endif
