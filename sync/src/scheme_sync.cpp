// A scheme's data-parallel gradient sync as a sync problem (scheme_sync.hpp): the group, the
// variables per replica and the timeline, read from what evaluate() priced.
#include "autoddl/sync/scheme_sync.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "autoddl/costmodel/error.hpp"

namespace autoddl::sync {

using namespace costmodel;

namespace {

[[noreturn]] void refuse(const std::string& reason) { throw InputError("--sync", "", reason); }

std::string dims_text(const std::vector<int>& dims) {
  std::string s;
  for (int d : dims) s += (s.empty() ? "" : ",") + std::to_string(d);
  return s.empty() ? "none" : s;
}

// The mesh dims the buckets sync over; every bucket must use the same ones, and every gradient
// must end broadcast on them (an all-reduce, maybe as reduce-scatter + all-reduce + all-gather
// over two dims), not sharded as ZeRO stores it.
std::vector<int> sync_dims(const IterationPlan& plan, const Graph& g, const Scheme& s) {
  std::vector<int> dims;
  bool first = true;
  for (const std::vector<PlannedBucket>& stage : plan.buckets)
  for (const PlannedBucket& b : stage) {
    std::set<int> here;
    for (const BoxingStep& st : b.steps) here.insert(st.dim);
    std::vector<int> v(here.begin(), here.end());
    if (first) dims = v;
    else if (v != dims) {
      refuse("scheme " + s.name + " syncs gradients over different mesh dims (" + dims_text(dims) + " and " +
             dims_text(v) + "); a sync strategy needs one data-parallel group");
    }
    first = false;
    for (const PlannedGradient& pg : b.grads) {
      const NdSbp& st = s.param_storage[static_cast<size_t>(pg.tensor)];
      for (int d : v) {
        if (!st.dims[d].is_broadcast()) {
          refuse("scheme " + s.name + " stores " + g.tensors[static_cast<size_t>(pg.tensor)].name + " as " +
                 to_string(st) + ": its gradient sync is not an all-reduce, which is what a sync strategy replaces");
        }
      }
    }
  }
  return dims;
}

// The all-reduce algorithm that prices a bucket's steps as the mesh does: one step is a ring;
// a reduce-scatter inside the node then an all-reduce across nodes (boxing's two-dim path of
// P to B) is the hierarchical one; anything else (dim-by-dim all-reduces) the fastest.
ArAlgorithm bucket_algorithm(const PlannedBucket& b) {
  if (b.steps.size() == 1) return ArAlgorithm::ring;
  if (b.steps.size() >= 2 && b.steps[0].kind == CollectiveKind::reduce_scatter &&
      b.steps[1].kind == CollectiveKind::all_reduce) {
    return ArAlgorithm::hierarchical;
  }
  return ArAlgorithm::automatic;
}

}  // namespace

std::vector<std::vector<int>> stage_groups(const IterationPlan& plan, const std::vector<int>& dims, int stage) {
  // Mesh dims are row-major over GPU ids (make_mesh): a GPU's id is the sum of coordinate x
  // stride; a group varies the data-parallel dims' coordinates and fixes the others.
  std::vector<int> in_group, others;
  for (int md = 0; md < plan.mesh.ndims(); ++md) {
    const int sd = plan.sbp_dim_of_mesh.empty() ? md : plan.sbp_dim_of_mesh[static_cast<size_t>(md)];
    if (md == plan.pipeline_dim) continue;
    (std::find(dims.begin(), dims.end(), sd) != dims.end() ? in_group : others).push_back(md);
  }
  auto expand = [&](std::vector<int> ids, const std::vector<int>& over) {
    for (int md : over) {
      const MeshDim& m = plan.mesh.dims[static_cast<size_t>(md)];
      std::vector<int> next;
      for (int id : ids)
        for (int i = 0; i < m.size; ++i) next.push_back(id + i * m.stride);
      ids = std::move(next);
    }
    std::sort(ids.begin(), ids.end());
    return ids;
  };
  const int base = plan.pipeline_dim >= 0 ? stage * plan.mesh.dims[static_cast<size_t>(plan.pipeline_dim)].stride : 0;
  std::vector<std::vector<int>> out;
  for (int origin : expand({base}, others)) out.push_back(expand({origin}, in_group));
  return out;
}

DataParallelSync data_parallel_sync(const Graph& g, const ClusterSpec& c, const Scheme& s,
                                    const IterationPlan& plan) {
  for (const std::vector<PlannedBucket>& gathers : plan.param_gathers) {
    if (gathers.empty()) continue;
    refuse("scheme " + s.name + " shards the optimizer (ZeRO-1): its gradient sync is a reduce-scatter into each "
           "replica's optimizer shard, which a sync strategy (every replica gets the whole gradient) cannot "
           "replace without unsharding the optimizer state; use a scheme with a replicated optimizer");
  }
  DataParallelSync dp;
  dp.dims = sync_dims(plan, g, s);

  const int G = c.gpus_per_node;
  auto shape_of = [G](const std::vector<int>& members, int& nodes, int& per_node) {
    std::set<int> ns;
    for (int id : members) ns.insert(id / G);
    nodes = static_cast<int>(ns.size());
    per_node = static_cast<int>(members.size()) / nodes;
  };
  dp.stages.resize(static_cast<size_t>(plan.stages));
  for (int st = 0; st < plan.stages; ++st) {
    StageSync& x = dp.stages[static_cast<size_t>(st)];
    x.stage = st;
    x.devices = stage_groups(plan, dp.dims, st).front();
    int nodes = 0, per_node = 0;
    shape_of(x.devices, nodes, per_node);
    if (st == 0) {
      dp.ranks = static_cast<int>(x.devices.size());
      dp.nodes = nodes;
      dp.ranks_per_node = per_node;
    } else if (nodes != dp.nodes || per_node != dp.ranks_per_node) {
      refuse("scheme " + s.name + ": stage " + std::to_string(st) + "'s data-parallel group spans " +
             std::to_string(nodes) + " nodes, stage 0's " + std::to_string(dp.nodes) +
             "; one strategy needs groups of one shape");
    }
  }
  dp.groups_per_node = std::max(1, std::min(G, plan.sbp_mesh.devices()) / dp.ranks_per_node);

  dp.cluster = c;
  dp.cluster.nodes = dp.nodes;
  dp.cluster.gpus_per_node = dp.ranks_per_node;
  if (dp.nodes != c.nodes || dp.ranks_per_node != G) dp.cluster.name = c.name + " data-parallel group";
  if (dp.groups_per_node > 1) {
    // The node's groups of this dim talk at once and share its NICs (mesh.hpp); a measured
    // collective of one group per node no longer applies.
    dp.cluster.inter.nic_bw_bytes_per_s /= dp.groups_per_node;
    dp.cluster.calibration = nullptr;
    dp.cluster.calibration_file.clear();
  }

  // Variables per replica: shapes divided by the storage's splits on the other dims.
  dp.vars = extract_variables(g);
  const std::vector<int> sbp_shape = plan.sbp_mesh.shape();
  std::map<std::string, size_t> var_of;
  for (size_t i = 0; i < dp.vars.size(); ++i) var_of[dp.vars[i].name] = i;
  std::map<int, size_t> var_of_tensor;
  for (int t = 0; t < static_cast<int>(g.tensors.size()); ++t) {
    const Tensor& tensor = g.tensors[static_cast<size_t>(t)];
    if (tensor.role != TensorRole::parameter) continue;
    Variable& v = dp.vars[var_of.at(tensor.name)];
    var_of_tensor[t] = var_of.at(tensor.name);
    const NdSbp& st = s.param_storage[static_cast<size_t>(t)];
    for (int d = 0; d < st.ndims; ++d) {
      if (!st.dims[d].is_split() || std::find(dp.dims.begin(), dp.dims.end(), d) != dp.dims.end()) continue;
      int64_t& extent = v.shape[static_cast<size_t>(st.dims[d].axis)];
      extent = (extent + sbp_shape[static_cast<size_t>(d)] - 1) / sbp_shape[static_cast<size_t>(d)];
    }
    int64_t elements = 1;
    for (int64_t x : v.shape) elements *= x;
    v.bytes = static_cast<double>(elements * dtype_bytes(v.dtype));
  }

  // Per stage: its timeline, the variables its buckets sync (a variable in no bucket, e.g. one
  // all-reduced in the backward's boxing, by the stage of its first reader) and evaluate()'s
  // buckets as a strategy (ring: the mesh's α-β ring), group ids numbered across stages.
  std::vector<Synchronizer> sync_of(dp.vars.size());
  std::vector<char> assigned(dp.vars.size(), 0);
  int group_base = 0;
  for (int st = 0; st < plan.stages; ++st) {
    const std::vector<PlannedBucket>& buckets = plan.buckets[static_cast<size_t>(st)];
    StageSync& x = dp.stages[static_cast<size_t>(st)];
    x.timeline.backward_s = buckets.empty() ? 0 : buckets.front().overlap_end_s;
    x.timeline.ready_s.assign(dp.vars.size(), x.timeline.backward_s);
    x.synced.assign(dp.vars.size(), 0);
    for (size_t b = 0; b < buckets.size(); ++b) {
      for (const PlannedGradient& pg : buckets[b].grads) {
        const size_t i = var_of_tensor.at(pg.tensor);
        x.timeline.ready_s[i] = pg.ready_s;
        x.synced[i] = 1;
        if (assigned[i]) continue;
        assigned[i] = 1;
        sync_of[i].group = group_base + static_cast<int>(b);
        sync_of[i].algorithm = bucket_algorithm(buckets[b]);
      }
    }
    group_base += static_cast<int>(buckets.size());
  }
  for (size_t i = 0; i < dp.vars.size(); ++i) {
    if (assigned[i]) continue;
    const int op = std::min<int>(dp.vars[i].first_reader, static_cast<int>(plan.ops.size()) - 1);
    const int st = op >= 0 ? plan.ops[static_cast<size_t>(op)].stage : 0;
    dp.stages[static_cast<size_t>(st)].synced[i] = 1;
    sync_of[i].group = group_base + st;
  }
  dp.ddp.id = "ddp-buckets";
  dp.ddp.builder = "scheme";
  for (size_t i = 0; i < dp.vars.size(); ++i) dp.ddp.vars.push_back({dp.vars[i].name, 0, 1, false, {sync_of[i]}});
  return dp;
}

StageProblem stage_problem(const DataParallelSync& dp, const StageSync& st, const Strategy& s) {
  StageProblem out;
  std::vector<int> local(dp.vars.size(), -1);
  out.timeline.backward_s = st.timeline.backward_s;
  for (size_t i = 0; i < dp.vars.size(); ++i) {
    if (!st.synced[i]) continue;
    local[i] = static_cast<int>(out.vars.size());
    out.vars.push_back(dp.vars[i]);
    out.timeline.ready_s.push_back(st.timeline.ready_s[i]);
    out.index.push_back(static_cast<int>(i));
  }
  std::map<std::string, size_t> var_of;
  for (size_t i = 0; i < dp.vars.size(); ++i) var_of[dp.vars[i].name] = i;
  out.strategy.id = s.id;
  out.strategy.builder = s.builder;
  for (const VarConfig& vc : s.vars) {
    if (local[var_of.at(vc.var)] >= 0) out.strategy.vars.push_back(vc);
  }
  return out;
}

SchemeSyncCost cost_with_strategy(const CostReport& r, const DataParallelSync& dp, const Strategy& s) {
  SchemeSyncCost cost;
  cost.ddp_sync_s = r.grad_sync_s;
  cost.ddp_exposed_s = r.grad_sync_exposed_s;
  cost.ddp_iteration_s = r.iteration_s;
  // Everything of the iteration but the backward the sync overlaps and its exposed part is
  // charged as "forward", so a stage's evaluation is the scheme's iteration with that stage's
  // exposed sync; the slowest stage's is the iteration (the cost model's max over stages).
  for (const StageSync& st : dp.stages) {
    StageProblem sp = stage_problem(dp, st, s);
    sp.timeline.forward_s = r.iteration_s - r.grad_sync_exposed_s - sp.timeline.backward_s;
    cost.stages.push_back(evaluate_analytical(sp.vars, sp.strategy, dp.cluster, sp.timeline));
    if (cost.stages.size() == 1 || cost.stages.back().iteration_s > cost.iteration_s) {
      cost.iteration_s = cost.stages.back().iteration_s;
      cost.slowest_stage = st.stage;
    }
  }
  cost.strategy = cost.stages[static_cast<size_t>(cost.slowest_stage)];
  return cost;
}

nlohmann::json scheme_sync_to_json(const DataParallelSync& dp, const SchemeSyncCost& cost) {
  nlohmann::json j = {{"group", {{"mesh_dims", dp.dims},
                     {"ranks", dp.ranks},
                     {"nodes", dp.nodes},
                     {"ranks_per_node", dp.ranks_per_node},
                     {"groups_per_node", dp.groups_per_node}}},
          {"ddp", {{"grad_sync_s", cost.ddp_sync_s},
                   {"grad_sync_exposed_s", cost.ddp_exposed_s},
                   {"iteration_s", cost.ddp_iteration_s}}},
          {"strategy", evaluation_to_json(cost.strategy)},
          {"iteration_s", cost.iteration_s},
          {"speedup", cost.iteration_s > 0 ? cost.ddp_iteration_s / cost.iteration_s : 1.0}};
  if (cost.stages.size() > 1) {
    j["slowest_stage"] = cost.slowest_stage;
    nlohmann::json& stages = j["stages"] = nlohmann::json::array();
    for (size_t st = 0; st < cost.stages.size(); ++st) {
      stages.push_back({{"stage", st},
                        {"exposed_sync_s", cost.stages[st].exposed_sync_s},
                        {"iteration_s", cost.stages[st].iteration_s}});
    }
  }
  return j;
}

}  // namespace autoddl::sync
