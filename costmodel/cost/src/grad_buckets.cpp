// Phase "gradient buckets" of evaluate() (see grad_buckets.hpp): gradient readiness in the last
// micro-batch's backward, DDP-style buckets overlapping it, and ZeRO-1's shard gathers.
#include "autoddl/costmodel/grad_buckets.hpp"
#include "autoddl/costmodel/compute.hpp"
#include "autoddl/costmodel/sm_contention.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace autoddl::costmodel {

NdSbp shard_replicated_dims(NdSbp st, const std::vector<int>& sbp_shape, const Shape& shape) {
  for (int d = 0; d < st.ndims; ++d) {
    if (!st.dims[d].is_broadcast() || sbp_shape[d] <= 1) continue;
    for (int a = 0; a < static_cast<int>(shape.size()); ++a) {
      NdSbp trial = st;
      trial.dims[d] = Sbp::split(a);
      if (divides(trial, sbp_shape.data(), shape)) {
        st = trial;
        break;
      }
    }
  }
  return st;
}

int optimizer_shard_state(const BoxingTable& table, const NdSbp& storage, const std::vector<int>& sbp_shape,
                          const Shape& shape) {
  const int idx = table.index_of(shard_replicated_dims(storage, sbp_shape, shape));
  return idx >= 0 ? idx : table.index_of(storage);
}

GradSyncStates grad_sync_states(const BoxingTable& table, int grad, int storage, bool shard_optimizer,
                                const std::vector<int>& sbp_shape, const Shape& shape) {
  GradSyncStates s;
  s.from = grad;
  s.storage = storage;
  s.to = shard_optimizer ? optimizer_shard_state(table, table.states()[storage], sbp_shape, shape) : storage;
  return s;
}

double grad_sync_time_s(const GradSync& g, const DeviceMesh& mesh) {
  if (g.bytes_scale == 1) return g.table->time_s(g.from, g.to);
  double t = 0;
  for (const BoxingStep& st : g.table->path(g.from, g.to)) t += mesh.collective(st.dim, st.kind, st.bytes * g.bytes_scale).time_s;
  return t;
}

double sync_buckets(const std::vector<GradSync>& grads, double bucket_bytes, double backward_end_s,
                    const DeviceMesh& mesh, CommTally& tally, double& total_s,
                    std::vector<PlannedBucket>* planned, int sm_count, double* contention_s, double* first_bucket_s) {
  struct Step {
    int dim;
    CollectiveKind kind;
    double bytes, wire_bytes;
  };
  std::vector<std::vector<Step>> paths;
  paths.reserve(grads.size());
  for (const GradSync& g : grads) {
    std::vector<Step> p;
    for (const BoxingStep& st : g.table->path(g.from, g.to)) {
      p.push_back({st.dim, st.kind, st.bytes * g.bytes_scale, st.wire_bytes * g.bytes_scale});
    }
    paths.push_back(std::move(p));
  }
  auto same_steps = [&](size_t a, size_t b) {
    if (paths[a].size() != paths[b].size()) return false;
    for (size_t x = 0; x < paths[a].size(); ++x) {
      if (paths[a][x].dim != paths[b][x].dim || paths[a][x].kind != paths[b][x].kind) return false;
    }
    return true;
  };
  double comm_free = 0, stolen = 0;
  size_t i = 0;
  while (i < grads.size()) {
    if (paths[i].empty()) {  // already in its storage SBP: nothing to sync
      ++i;
      continue;
    }
    std::vector<Step> bucket = paths[i];
    double bytes = grads[i].bytes * grads[i].bytes_scale;
    size_t j = i + 1;
    while (j < grads.size() && bytes < bucket_bytes && same_steps(i, j)) {
      for (size_t x = 0; x < bucket.size(); ++x) {
        bucket[x].bytes += paths[j][x].bytes;
        bucket[x].wire_bytes += paths[j][x].wire_bytes;
      }
      bytes += grads[j].bytes * grads[j].bytes_scale;
      ++j;
    }
    double t = 0;
    PlannedBucket pb;
    const double start = std::max(grads[j - 1].ready_s, comm_free);
    for (const Step& st : bucket) {
      const CollectiveEstimate e = mesh.collective(st.dim, st.kind, st.bytes);
      // NCCL's CTAs take e.channels SMs from the backward while this step overlaps it.
      stolen += sm_contention_s(std::min(start + t + e.time_s, backward_end_s) - (start + t), e.channels, sm_count);
      t += e.time_s;
      tally.add(st.kind, e.time_s, st.wire_bytes, 1);
      pb.steps.push_back({st.dim, st.kind, st.bytes, st.wire_bytes, e.time_s, e.algo});
    }
    if (planned) {
      for (size_t x = i; x < j; ++x)
        pb.grads.push_back({grads[x].tensor, grads[x].op, grads[x].bytes, grads[x].ready_s,
                            grads[x].table->route(grads[x].from, grads[x].to)});
      pb.overlap_end_s = backward_end_s;
      planned->push_back(std::move(pb));
    }
    comm_free = start + t;
    if (first_bucket_s && total_s == 0) *first_bucket_s = t;
    total_s += t;
    i = j;
  }
  // The backward ends `stolen` later; what the sync runs past that end is exposed.
  if (contention_s) *contention_s = stolen;
  return std::max(0.0, comm_free - backward_end_s - stolen);
}

GradSyncPhase sync_gradients(const Graph& graph, const Scheme& scheme, const EvalFrame& f,
                             const std::vector<OpCompute>& compute, const BoxingPlan& boxing, IterationPlan* plan) {
  const int n_ops = static_cast<int>(graph.ops.size());
  const int S = f.stages;
  // Each stage's parameter gradients in op order, and ZeRO-1's updated shards back to storage.
  std::vector<std::vector<GradSync>> grads(S), gathers(S);
  for (int i = 0; i < n_ops; ++i) {
    const Op& op = graph.ops[i];
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      const int t = op.inputs[k];
      const Tensor& tensor = graph.tensors[t];
      if (tensor.role != TensorRole::parameter) continue;
      const InputBoxing& in = boxing.input(i, static_cast<int>(k));
      const GradSyncStates gs =
          grad_sync_states(*in.table, in.grad, in.from, scheme.shard_optimizer, f.sbp_shape, tensor.shape);
      const double bytes = static_cast<double>(tensor.bytes());
      const double scale = grad_reduce_bytes_per_param(tensor.dtype, scheme.grad_reduce_16bit) / dtype_bytes(tensor.dtype);
      grads[f.op_stage[i]].push_back({t, i, gs.from, gs.to, in.table, bytes, 0, scale});
      if (gs.to != gs.storage) gathers[f.op_stage[i]].push_back({t, i, gs.to, gs.storage, in.table, bytes, 0});
    }
  }
  // Gradient readiness: the last micro-batch's backward walks ops in reverse order per stage.
  std::vector<double> bwd_clock(S, 0), ready_at(n_ops, 0), stage_fwd_s(S, 0);
  for (int i = n_ops - 1; i >= 0; --i) {
    const int s = f.op_stage[i];
    bwd_clock[s] += compute[i].bwd_s + boxing.ops[i].bwd_s + boxing.ops[i].bwd_send_s;
    ready_at[i] = bwd_clock[s];
    stage_fwd_s[s] += compute[i].fwd_s + boxing.ops[i].fwd_s;
  }
  GradSyncPhase out;
  out.param_gather_s.assign(S, 0);
  out.param_gather_first_s.assign(S, 0);
  out.stage_tally.resize(S);
  out.op_sync_s.assign(n_ops, 0);
  double tail = 0;  // the most any stage's backward runs longer, slowed or exposed, for its sync
  for (int s = 0; s < S; ++s) {
    // A parameter read by several ops of the stage (tied embeddings): its gradient is summed
    // locally and synced once, when the earliest reader's backward (the last one) is done.
    std::vector<GradSync> uniq;
    std::map<int, size_t> slot;
    for (const GradSync& g0 : grads[s]) {
      GradSync g = g0;
      g.ready_s = ready_at[g.op];
      auto it = slot.find(g.tensor);
      if (it == slot.end()) {
        slot[g.tensor] = uniq.size();
        uniq.push_back(g);
      } else if (g.ready_s > uniq[it->second].ready_s) {
        uniq[it->second].ready_s = g.ready_s;
        uniq[it->second].op = g.op;
      }
    }
    std::stable_sort(uniq.begin(), uniq.end(), [](const GradSync& a, const GradSync& b) { return a.ready_s < b.ready_s; });
    double sync_total = 0, stolen = 0;
    CommTally sync_tally;
    double exposed = sync_buckets(uniq, scheme.bucket_bytes, bwd_clock[s], f.split.sbp_mesh, sync_tally, sync_total,
                                  plan ? &plan->buckets[s] : nullptr, f.sm_count, &stolen);
    if (scheme.fsdp && f.micro_batches > 1) {
      // FSDP reduce-scatters every micro-batch's gradients into the shards (its sharded gradients
      // leave no full buffer to accumulate in: PyTorch FSDP's "sharded gradient accumulation").
      // Each earlier micro-batch's sync runs on under the next micro-batch's forward.
      const int earlier = f.micro_batches - 1;
      const double past_forward = std::max(0.0, exposed - stage_fwd_s[s]);
      exposed += earlier * past_forward;
      stolen *= f.micro_batches;
      sync_total *= f.micro_batches;
      sync_tally = sync_tally.scaled(f.micro_batches);
    }
    out.stage_tally[s] += sync_tally;
    out.exposed_s = std::max(out.exposed_s, exposed);
    tail = std::max(tail, exposed + stolen);
    out.total_s = std::max(out.total_s, sync_total);
    for (const GradSync& g : uniq) out.op_sync_s[g.op] += grad_sync_time_s(g, f.split.sbp_mesh);
    // The all-gather of updated shards follows the optimizer step, exposed (Megatron overlaps it
    // with the next forward only with --overlap-param-gather).
    std::vector<GradSync> upd;
    std::set<int> seen_param;
    for (const GradSync& g : gathers[s]) {
      if (seen_param.insert(g.tensor).second) upd.push_back(g);
    }
    double gather_total = 0;
    out.param_gather_s[s] = sync_buckets(upd, scheme.bucket_bytes, 0, f.split.sbp_mesh, out.stage_tally[s],
                                         gather_total, plan ? &plan->param_gathers[s] : nullptr, 0, nullptr,
                                         &out.param_gather_first_s[s]);
  }
  out.contention_s = tail - out.exposed_s;
  return out;
}

}  // namespace autoddl::costmodel
