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
  for (const PlannedBucket& b : plan.buckets.front()) {
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

DataParallelSync data_parallel_sync(const Graph& g, const ClusterSpec& c, const Scheme& s,
                                    const IterationPlan& plan) {
  if (plan.stages > 1) refuse("scheme " + s.name + " is pipelined; --sync supports one stage only");
  if (!plan.param_gathers.empty() && !plan.param_gathers.front().empty()) {
    refuse("scheme " + s.name + " shards the optimizer (ZeRO-1); a sync strategy replaces an all-reduce only");
  }
  DataParallelSync dp;
  dp.dims = sync_dims(plan, g, s);

  // The group of GPU 0: ids differing from 0 only in the data-parallel digits.
  std::vector<int> members{0};
  for (int d : dp.dims) {
    const MeshDim& m = plan.sbp_mesh.dims[static_cast<size_t>(d)];
    std::vector<int> next;
    for (int id : members)
      for (int i = 0; i < m.size; ++i) next.push_back(id + i * m.stride);
    members = std::move(next);
  }
  const int G = c.gpus_per_node;
  std::set<int> nodes;
  for (int id : members) nodes.insert(id / G);
  dp.ranks = static_cast<int>(members.size());
  dp.nodes = static_cast<int>(nodes.size());
  dp.ranks_per_node = dp.ranks / dp.nodes;
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

  // Timeline and evaluate()'s buckets as a strategy (ring: the mesh's α-β ring).
  const std::vector<PlannedBucket>& buckets = plan.buckets.front();
  dp.timeline.backward_s = buckets.empty() ? 0 : buckets.front().overlap_end_s;
  dp.timeline.ready_s.assign(dp.vars.size(), dp.timeline.backward_s);
  std::vector<Synchronizer> sync_of(dp.vars.size());
  for (Synchronizer& sy : sync_of) sy.group = static_cast<int>(buckets.size());
  for (size_t b = 0; b < buckets.size(); ++b) {
    for (const PlannedGradient& pg : buckets[b].grads) {
      const size_t i = var_of_tensor.at(pg.tensor);
      dp.timeline.ready_s[i] = pg.ready_s;
      sync_of[i].group = static_cast<int>(b);
      sync_of[i].algorithm = bucket_algorithm(buckets[b]);
    }
  }
  dp.ddp.id = "ddp-buckets";
  dp.ddp.builder = "scheme";
  for (size_t i = 0; i < dp.vars.size(); ++i) dp.ddp.vars.push_back({dp.vars[i].name, 0, 1, false, {sync_of[i]}});
  return dp;
}

SchemeSyncCost cost_with_strategy(const CostReport& r, const DataParallelSync& dp, const Strategy& s) {
  SchemeSyncCost cost;
  cost.ddp_sync_s = r.grad_sync_s;
  cost.ddp_exposed_s = r.grad_sync_exposed_s;
  cost.ddp_iteration_s = r.iteration_s;
  // Everything of the iteration but the backward the sync overlaps and its exposed part is
  // charged as "forward", so the evaluation's iteration is the scheme's with the strategy.
  SyncTimeline t = dp.timeline;
  t.forward_s = r.iteration_s - r.grad_sync_exposed_s - t.backward_s;
  cost.strategy = evaluate_analytical(dp.vars, s, dp.cluster, t);
  cost.iteration_s = cost.strategy.iteration_s;
  return cost;
}

nlohmann::json scheme_sync_to_json(const DataParallelSync& dp, const SchemeSyncCost& cost) {
  return {{"group", {{"mesh_dims", dp.dims},
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
}

}  // namespace autoddl::sync
