// The lowering is described in sync_emit.hpp's header comment.
#ifdef AUTODDL_SYNC_HAVE_SIM
#include "sync_emit.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "autoddl/costmodel/collective.hpp"
#include "autoddl/sync/compression.hpp"

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
  for (const Piece& pc : pieces) {
    emit_groups_before(pc.order, false);
    if (pc.sync->arch != Arch::ps) continue;
    const bool local = pc.sync->local_replication;
    const int node = pc.sync->server;
    const int server = L.devices[static_cast<size_t>(node * G)];
    const double b = sender_bytes(pc, local ? N : W);
    std::vector<int> senders;  // ranks
    for (int r = 0; r < W; ++r) {
      if (r / G == node) continue;      // same node: no NIC crossing
      if (local && r % G != 0) continue;  // the node's proxy pushes for it
      senders.push_back(r);
    }
    auto send = [&](int from, int to, double bytes, std::vector<sim::TaskId> deps, int lane, const std::string& n) {
      sim::TaskId id = p.send_recv(from, to, bytes,
                                   {.deps = std::move(deps), .phase = L.phase, .stream = lane, .name = n, .stage = L.stage});
      add(id, c.inter.latency_s + bytes / nic_bw);
      return id;
    };
    std::vector<sim::TaskId> pushes;
    for (int r : senders) {
      pushes.push_back(send(L.devices[static_cast<size_t>(r)], server, b * factor(), {in.ready(r, pc.var_index)},
                            L.first_lane + r * N + node, "push " + pc.var->name));
    }
    for (int r : senders)
      send(server, L.devices[static_cast<size_t>(r)], b * factor(), pushes, L.first_lane + r * N + node, "pull " + pc.var->name);
  }
  emit_groups_before(0, true);
  return out;
}

}  // namespace autoddl::sync::detail
#endif
