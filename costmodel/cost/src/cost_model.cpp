// One iteration of a scheme under the analytical model (see cost_model.hpp). The walk is
// O(ops + edges) with boxing tables shared per tensor shape, so evaluating a 96-layer GPT
// takes milliseconds; search uses precomputed tables built from the same functions.
#include "autoddl/costmodel/cost_model.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "autoddl/costmodel/activation_memory.hpp"
#include "autoddl/costmodel/boxing.hpp"
#include "autoddl/costmodel/compute.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/mesh.hpp"

namespace autoddl::costmodel {

Shape micro_batch_shape(const Tensor& t, int micro_batches) {
  Shape s = t.shape;
  if (t.role != TensorRole::parameter && t.batched && !s.empty() && micro_batches > 1 &&
      s[0] % micro_batches == 0) {
    s[0] /= micro_batches;
  }
  return s;
}

bool recomputed(const Graph& graph, const Op& op, Recompute recompute) {
  switch (recompute) {
    case Recompute::none: return false;
    case Recompute::selective: return is_attention_core(graph, op);
    case Recompute::full: return !op.block.empty();  // Megatron checkpoints transformer layers only
  }
  return false;
}

bool is_attention_core(const Graph& graph, const Op& op) {
  auto square4 = [&](int t) {
    const Tensor& x = graph.tensors[t];
    return x.role == TensorRole::activation && x.shape.size() == 4 && x.shape[2] == x.shape[3] &&
           x.shape[2] > 1;
  };
  for (int t : op.inputs) {
    if (square4(t)) return true;
  }
  for (int t : op.outputs) {
    if (square4(t)) return true;
  }
  return false;
}

std::string signature_string(const Graph& graph, const Op& op, const OpSignature& sig) {
  std::string s;
  for (int i = 0; i < sig.n_in; ++i) {
    s += (i ? " " : "") + graph.tensors[op.inputs[i]].name + ":" + to_string(sig.in[i]);
  }
  s += " ->";
  for (int o = 0; o < sig.n_out; ++o) s += " " + to_string(sig.out[o]);
  return s;
}

// The ZeRO-1 shard (cost_model.hpp): storage with every replicated dim (size > 1) split
// on the first axis that divides, as ZeRO and Megatron's distributed optimizer shard the flat
// buffer; the storage itself when no axis divides.
int optimizer_shard_state(const BoxingTable& table, const NdSbp& storage, const std::vector<int>& sbp_shape,
                          const Shape& shape) {
  NdSbp st = storage;
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
  const int idx = table.index_of(st);
  return idx >= 0 ? idx : table.index_of(storage);
}

namespace {

bool differentiable(const Tensor& t) {
  return t.dtype != DType::int32 && t.dtype != DType::int64 && t.role != TensorRole::input;
}

// One parameter gradient waiting for sync: its conversion and when it becomes ready.
struct GradSync {
  int tensor;
  int op;                 // the reader whose backward produces it
  int from, to;           // states in `table`
  const BoxingTable* table;
  double bytes;           // logical gradient bytes
  double ready_s;         // in the last micro-batch's backward of its stage
};

// Fuses consecutive gradients whose syncs are the same collectives (same mesh dims and kinds,
// e.g. an all-reduce over the data-parallel dim of whatever each device holds) into buckets of
// >= bucket_bytes, as DDP fuses its flat gradient buffer, and overlaps them with the backward;
// returns the exposed time past `backward_end_s`.
double sync_buckets(const std::vector<GradSync>& grads, double bucket_bytes, double backward_end_s,
                    const DeviceMesh& mesh, CommTally& tally, double& total_s,
                    std::vector<PlannedBucket>* planned) {
  struct Step {
    int dim;
    CollectiveKind kind;
    double bytes, wire_bytes;
  };
  std::vector<std::vector<Step>> paths;
  paths.reserve(grads.size());
  for (const GradSync& g : grads) {
    std::vector<Step> p;
    for (const BoxingStep& st : g.table->path(g.from, g.to)) p.push_back({st.dim, st.kind, st.bytes, st.wire_bytes});
    paths.push_back(std::move(p));
  }
  auto same_steps = [&](size_t a, size_t b) {
    if (paths[a].size() != paths[b].size()) return false;
    for (size_t x = 0; x < paths[a].size(); ++x) {
      if (paths[a][x].dim != paths[b][x].dim || paths[a][x].kind != paths[b][x].kind) return false;
    }
    return true;
  };
  double comm_free = 0;
  size_t i = 0;
  while (i < grads.size()) {
    if (paths[i].empty()) {  // already in its storage SBP: nothing to sync
      ++i;
      continue;
    }
    std::vector<Step> bucket = paths[i];
    double bytes = grads[i].bytes;
    size_t j = i + 1;
    while (j < grads.size() && bytes < bucket_bytes && same_steps(i, j)) {
      for (size_t x = 0; x < bucket.size(); ++x) {
        bucket[x].bytes += paths[j][x].bytes;
        bucket[x].wire_bytes += paths[j][x].wire_bytes;
      }
      bytes += grads[j].bytes;
      ++j;
    }
    double t = 0;
    PlannedBucket pb;
    for (const Step& st : bucket) {
      double step_t = mesh.collective_time_s(st.dim, st.kind, st.bytes);
      t += step_t;
      tally.add(st.kind, step_t, st.wire_bytes, 1);
      pb.steps.push_back({st.dim, st.kind, st.bytes, st.wire_bytes, step_t});
    }
    if (planned) {
      for (size_t x = i; x < j; ++x)
        pb.grads.push_back({grads[x].tensor, grads[x].op, grads[x].bytes, grads[x].ready_s});
      pb.overlap_end_s = backward_end_s;
      planned->push_back(std::move(pb));
    }
    double start = std::max(grads[j - 1].ready_s, comm_free);
    comm_free = start + t;
    total_s += t;
    i = j;
  }
  return std::max(0.0, comm_free - backward_end_s);
}

[[noreturn]] void scheme_error(const std::string& field, const std::string& reason) {
  throw InputError("scheme", field, reason);
}

}  // namespace

CostReport evaluate(const Graph& graph, const ClusterSpec& cluster, const Scheme& scheme) {
  return evaluate(graph, cluster, scheme, nullptr);
}

CostReport evaluate(const Graph& graph, const ClusterSpec& cluster, const Scheme& scheme,
                    IterationPlan* plan) {
  const int n_ops = static_cast<int>(graph.ops.size());
  const int n_tensors = static_cast<int>(graph.tensors.size());
  if (static_cast<int>(scheme.op_sigs.size()) != n_ops) {
    scheme_error("op_sigs", "has " + std::to_string(scheme.op_sigs.size()) + " signatures for " +
                                std::to_string(n_ops) + " ops");
  }
  if (static_cast<int>(scheme.param_storage.size()) != n_tensors) {
    scheme_error("param_storage", "has " + std::to_string(scheme.param_storage.size()) +
                                      " entries for " + std::to_string(n_tensors) + " tensors");
  }
  const int m = scheme.micro_batches;
  if (m < 1 || graph.batch % m != 0) {
    scheme_error("micro_batches", std::to_string(m) + " does not divide the batch " +
                                      std::to_string(graph.batch));
  }
  const DeviceMesh mesh = make_mesh(cluster, scheme.mesh_shape, "scheme mesh");
  const int S = scheme.stages();
  const int v = std::max(1, scheme.virtual_stages);
  DeviceMesh sbp_mesh;
  sbp_mesh.calibration = mesh.calibration;
  LinkTier pp_tier;
  for (int d = 0; d < mesh.ndims(); ++d) {
    if (d == scheme.pipeline_dim) pp_tier = mesh.dims[d].tier;
    else sbp_mesh.dims.push_back(mesh.dims[d]);
  }
  if (sbp_mesh.dims.empty()) sbp_mesh.dims.push_back(MeshDim{});  // size-1 SBP dim
  const std::vector<int> sbp_shape = sbp_mesh.shape();
  const int nd = sbp_mesh.ndims();
  if (!scheme.op_chunk.empty() && static_cast<int>(scheme.op_chunk.size()) != n_ops) {
    scheme_error("op_chunk", "needs one chunk per op");
  }
  auto stage_of = [&](int op) { return scheme.op_chunk.empty() ? 0 : scheme.op_chunk[op] % S; };
  if (plan) {
    *plan = IterationPlan{};
    plan->mesh = mesh;
    plan->pipeline_dim = scheme.pipeline_dim;
    plan->sbp_mesh = sbp_mesh;
    for (int d = 0, k = 0; d < mesh.ndims(); ++d) plan->sbp_dim_of_mesh.push_back(d == scheme.pipeline_dim ? -1 : k++);
    plan->stages = S;
    plan->micro_batches = m;
    plan->virtual_stages = v;
    plan->schedule = scheme.schedule;
    plan->pipeline_tier = pp_tier;
    plan->ops.resize(n_ops);
    plan->buckets.resize(S);
    plan->param_gathers.resize(S);
    plan->optimizer_s.assign(S, 0);
    plan->optimizer_params.assign(S, 0);
  }

  // Micro-batch shapes and bytes.
  std::vector<Shape> shape_mb(n_tensors);
  std::vector<double> bytes_mb(n_tensors);
  for (int t = 0; t < n_tensors; ++t) {
    shape_mb[t] = micro_batch_shape(graph.tensors[t], m);
    int64_t e = 1;
    for (int64_t x : shape_mb[t]) e *= x;
    bytes_mb[t] = static_cast<double>(e * dtype_bytes(graph.tensors[t].dtype));
  }
  // Output slot of each produced tensor.
  std::vector<int> out_slot(n_tensors, -1);
  for (const Op& op : graph.ops) {
    for (size_t o = 0; o < op.outputs.size(); ++o) out_slot[op.outputs[o]] = static_cast<int>(o);
  }

  // Gradients of a tensor read by several ops (Q, K and V read one LayerNorm) are summed
  // locally when they share an SBP, then boxed once: only the first such reader (in forward
  // order, i.e. the last backward) is charged.
  std::vector<char> grad_charged(static_cast<size_t>(n_ops) * kMaxOpInputs, 1);
  {
    std::vector<std::vector<std::pair<int, NdSbp>>> seen(n_tensors);
    for (int i = 0; i < n_ops; ++i) {
      const Op& op = graph.ops[i];
      for (size_t k = 0; k < op.inputs.size(); ++k) {
        const int t = op.inputs[k];
        if (graph.tensors[t].producer < 0) continue;
        const NdSbp& g = scheme.op_sigs[i].in_grad[k];
        const int st = stage_of(i);
        bool dup = false;
        for (const auto& [s2, g2] : seen[t]) dup = dup || (s2 == st && g2 == g);
        if (dup) grad_charged[i * kMaxOpInputs + k] = 0;
        else seen[t].push_back({st, g});
      }
    }
  }
  // Likewise forward: a tensor is boxed once per stage and target SBP and the result shared by
  // its readers there, and sent to another stage once, however many ops read it there.
  std::vector<char> fwd_charged(static_cast<size_t>(n_ops) * kMaxOpInputs, 1);
  std::vector<char> send_charged(static_cast<size_t>(n_ops) * kMaxOpInputs, 1);
  {
    std::vector<std::vector<std::pair<int, NdSbp>>> boxed(n_tensors);
    std::vector<std::vector<int>> sent(n_tensors);
    for (int i = 0; i < n_ops; ++i) {
      const Op& op = graph.ops[i];
      const int st = stage_of(i);
      for (size_t k = 0; k < op.inputs.size(); ++k) {
        const int t = op.inputs[k];
        if (graph.tensors[t].producer < 0 || graph.tensors[t].role == TensorRole::parameter) continue;
        const NdSbp& want = scheme.op_sigs[i].in[k];
        bool dup = false;
        for (const auto& [s2, w2] : boxed[t]) dup = dup || (s2 == st && w2 == want);
        if (dup) fwd_charged[i * kMaxOpInputs + k] = 0;
        else boxed[t].push_back({st, want});
        if (std::find(sent[t].begin(), sent[t].end(), st) != sent[t].end()) send_charged[i * kMaxOpInputs + k] = 0;
        else sent[t].push_back(st);
      }
    }
  }

  BoxingCache cache(sbp_mesh);
  auto state = [&](const BoxingTable& table, const NdSbp& s, const std::string& what) {
    int idx = table.index_of(s);
    if (idx < 0) scheme_error(what, to_string(s) + " does not divide the tensor's micro-batch shape");
    return idx;
  };

  CostReport r;
  r.model = graph.name;
  r.cluster = cluster.name;
  r.scheme = scheme.name;
  r.mesh = mesh.shape_string();
  r.devices = mesh.devices();
  r.stages = S;
  r.micro_batches = m;
  r.params = static_cast<double>(graph.parameter_count());
  r.per_op.resize(n_ops);

  std::vector<double> t_fwd(S, 0), t_bwd(S, 0), compute_mb(S, 0), comm_mb(S, 0);
  std::vector<double> sendrecv_mb(S, 0);
  // Backward work a stage does for an op of another stage: scatter/gather's all-gather of a
  // received gradient (seconds per micro-batch, counted as send/recv).
  std::vector<double> stage_extra_bwd(S, 0);
  // Communication of one device: per micro-batch (boxing, send/recv) and once per iteration (grad sync).
  std::vector<CommTally> stage_mb(S), stage_once(S);
  // The training dtype: that of the parameters (fp32 if there are none).
  DType train_dtype = DType::fp32;
  for (const Tensor& t : graph.tensors) {
    if (t.role == TensorRole::parameter) {
      train_dtype = t.dtype;
      break;
    }
  }
  if (plan) plan->train_dtype = train_dtype;
  // Backward timeline of the last micro-batch per stage, for gradient-sync overlap.
  std::vector<std::vector<GradSync>> grads(S);
  std::vector<std::vector<GradSync>> gathers(S);  // ZeRO-1: updated shards back to storage
  std::vector<double> bwd_clock(S, 0);

  // Per op and micro-batch: compute, boxing (collectives) and pipeline send/recv.
  std::vector<double> op_fwd_compute(n_ops), op_bwd_compute(n_ops), op_fwd_box(n_ops, 0),
      op_bwd_box(n_ops, 0), op_fwd_sr(n_ops, 0), op_bwd_sr(n_ops, 0);
  // tp_overlap (Scheme::overlap_tp_comm): GEMM time of each matmul not yet spent hiding a
  // collective, forward and backward. The all-gather into a matmul's activation input hides
  // under that matmul; the reduce-scatter of its output (boxed at the consumer's input) under
  // the producing matmul; their backward mirrors under the matching backward GEMMs.
  std::vector<double> gemm_fwd_left(scheme.overlap_tp_comm ? n_ops : 0, 0),
      gemm_bwd_left(scheme.overlap_tp_comm ? n_ops : 0, 0);
  auto hide_under = [&](std::vector<double>& left, int consumer, int producer, double comm_s) {
    if (!scheme.overlap_tp_comm || comm_s <= 0) return comm_s;
    for (int op_id : {consumer, producer}) {
      if (graph.ops[op_id].kind != OpKind::matmul) continue;
      const double hidden = std::min(comm_s, left[op_id]);
      left[op_id] -= hidden;
      return comm_s - hidden;
    }
    return comm_s;
  };
  for (int i = 0; i < n_ops; ++i) {
    const Op& op = graph.ops[i];
    const OpSignature& sig = scheme.op_sigs[i];
    if (sig.n_in != static_cast<int>(op.inputs.size()) || sig.n_out != static_cast<int>(op.outputs.size())) {
      scheme_error("op " + op.name, "signature has the wrong number of operands");
    }
    for (int k = 0; k < sig.n_in; ++k) {
      if (sig.in[k].ndims != nd) scheme_error("op " + op.name, "signature is not over the " + std::to_string(nd) + " SBP mesh dims");
    }
    const int stage = stage_of(i);
    const double share = micro_batch_work_share(graph, op, m) / sig.compute_split;
    const OpTimes kt = op_kernel_times(cluster.gpu, graph, op, share);
    double fwd = kt.fwd_s, bwd = kt.bwd_s;
    double recompute = 0;
    const bool recompute_op = recomputed(graph, op, scheme.recompute);
    if (recompute_op) {
      recompute = fwd;
      bwd += fwd;
    }
    op_fwd_compute[i] = fwd;
    op_bwd_compute[i] = bwd;
    if (scheme.overlap_tp_comm && op.kind == OpKind::matmul) {
      gemm_fwd_left[i] = fwd;
      gemm_bwd_left[i] = bwd;
    }
    PlannedOp* pop = plan ? &plan->ops[i] : nullptr;
    if (pop) {
      pop->stage = stage;
      pop->chunk = scheme.op_chunk.empty() ? 0 : scheme.op_chunk[i];
      pop->fwd_s = fwd;
      pop->bwd_s = bwd - recompute;
      pop->recompute_s = recompute;
      pop->recompute = recompute_op;
      pop->inputs.resize(sig.n_in);
    }

    for (int k = 0; k < sig.n_in; ++k) {
      const int t = op.inputs[k];
      const Tensor& tensor = graph.tensors[t];
      if (tensor.role == TensorRole::parameter) {
        const NdSbp& st = scheme.param_storage[t];
        if (st.ndims != nd) scheme_error("param_storage " + tensor.name, "not over the SBP mesh dims");
        const BoxingTable& table = cache.get(tensor.shape, static_cast<double>(tensor.bytes()));
        int a = state(table, st, "param_storage " + tensor.name);
        int b = state(table, sig.in[k], "op " + op.name);
        double gather = table.time_s(a, b);
        if (pop) {
          pop->inputs[k].role = InputRole::parameter;
          pop->inputs[k].tensor = t;
        }
        if (gather > 0) {
          op_fwd_box[i] += gather;
          table.tally(a, b, stage_mb[stage]);
          if (pop) pop->inputs[k].fwd = table.path(a, b);
          if (scheme.regather_in_backward) {
            op_bwd_box[i] += gather;
            table.tally(a, b, stage_mb[stage]);
            if (pop) pop->inputs[k].bwd = table.path(a, b);
          }
        }
        int g = state(table, sig.in_grad[k], "op " + op.name + " gradient");
        // ZeRO-1 / distributed optimizer: gradients are reduce-scattered to the shard this
        // device updates, and the updated shard is all-gathered after the step.
        const int shard = scheme.shard_optimizer ? optimizer_shard_state(table, st, sbp_shape, tensor.shape) : a;
        grads[stage].push_back({t, i, g, shard, &table, static_cast<double>(tensor.bytes()), 0});
        if (shard != a) gathers[stage].push_back({t, i, shard, a, &table, static_cast<double>(tensor.bytes()), 0});
        continue;
      }
      const int j = tensor.producer;
      if (j < 0) {  // graph inputs are loaded in whatever SBP the op wants
        if (pop) pop->inputs[k].tensor = t;
        continue;
      }
      const OpSignature& psig = scheme.op_sigs[j];
      const int o = out_slot[t];
      const BoxingTable& table = cache.get(shape_mb[t], bytes_mb[t]);
      int from = state(table, psig.out[o], "op " + graph.ops[j].name);
      int to = state(table, sig.in[k], "op " + op.name);
      const bool box_here = fwd_charged[i * kMaxOpInputs + k] != 0;
      if (box_here) {
        op_fwd_box[i] += hide_under(gemm_fwd_left, i, j, table.time_s(from, to));
        table.tally(from, to, stage_mb[stage]);
        // Recompute re-runs the forward from the checkpoint, its collectives included
        // (Megatron's checkpointed RowParallelLinear all-reduces again in backward).
        if (recompute_op) {
          op_bwd_box[i] += table.time_s(from, to);
          table.tally(from, to, stage_mb[stage]);
        }
      }
      const bool cross = stage_of(j) != stage;
      PlannedInput* pin = pop ? &pop->inputs[k] : nullptr;
      if (pin) {
        pin->role = InputRole::activation;
        pin->tensor = t;
        pin->producer = j;
        // Only the reader that carries the stage's one send of this tensor is marked; later
        // readers on that stage run after it and use the received copy.
        pin->cross_stage = cross && send_charged[i * kMaxOpInputs + k];
        if (from != to && box_here) pin->fwd = table.path(from, to);
      }
      // One stage-to-stage send of this tensor's local piece (forward) or its summed gradient
      // (backward), charged to op i; the plan records bytes and seconds where it is recorded.
      // The gathers run on the receiving stage: this op's (forward) or the producer's (backward).
      auto stage_send = [&](const NdSbp& piece, double& op_sr, double* plan_bytes, double* plan_s,
                            std::vector<BoxingStep>* plan_gather, int receiver) {
        const double local = local_bytes(piece, sbp_shape.data(), bytes_mb[t]);
        // Scatter/gather: replicas of the piece each send a 1/r share, the receivers
        // all-gather it dim by dim over the replicated dims.
        double share = local;
        std::vector<int> gather_dims;
        if (scheme.scatter_gather_sends) {
          for (int d = 0; d < nd; ++d) {
            if (piece.dims[d].is_broadcast() && sbp_shape[d] > 1) {
              gather_dims.push_back(d);
              share /= sbp_shape[d];
            }
          }
        }
        const double sr = pp_tier.alpha_s + share * pp_tier.beta_s_per_byte;
        op_sr += sr;
        stage_mb[stage].add(CollectiveKind::send_recv, sr, share);
        double gathered = share;
        for (int d : gather_dims) {
          gathered *= sbp_shape[d];
          BoxingStep step;
          boxing_step_1d(sbp_mesh, d, Sbp::split(0), Sbp::broadcast(), gathered, step);
          if (receiver == stage) {
            op_sr += step.time_s;
          } else {  // the producer's stage, on its row
            stage_extra_bwd[receiver] += step.time_s;
            r.per_op[j].boxing_s += m * step.time_s;
          }
          stage_mb[receiver].add(step.kind, step.time_s, step.wire_bytes);
          if (plan_gather) plan_gather->push_back(step);
        }
        if (plan_bytes) *plan_bytes = share;
        if (plan_s) *plan_s = sr;
      };
      if (cross && send_charged[i * kMaxOpInputs + k]) {
        stage_send(psig.out[o], op_fwd_sr[i], pin ? &pin->fwd_send_bytes : nullptr, pin ? &pin->fwd_send_s : nullptr,
                   pin ? &pin->fwd_send_gather : nullptr, stage);
      }
      if (differentiable(tensor) && grad_charged[i * kMaxOpInputs + k]) {
        int gfrom = state(table, sig.in_grad[k], "op " + op.name + " gradient");
        int gto = state(table, psig.out_grad[o], "op " + graph.ops[j].name + " gradient");
        op_bwd_box[i] += hide_under(gemm_bwd_left, i, j, table.time_s(gfrom, gto));
        table.tally(gfrom, gto, stage_mb[stage]);
        if (pin && gfrom != gto) pin->bwd = table.path(gfrom, gto);
        // The stage's gradients of this tensor are summed locally and sent back once.
        if (cross && send_charged[i * kMaxOpInputs + k]) {
          if (pin) pin->bwd_send = true;
          stage_send(sig.in_grad[k], op_bwd_sr[i], pin ? &pin->bwd_send_bytes : nullptr,
                     pin ? &pin->bwd_send_s : nullptr, pin ? &pin->bwd_send_gather : nullptr, stage_of(j));
        }
      }
    }
    // With overlapped p2p the sends leave the critical path here; what exceeds the stage's
    // compute is added back after the loop.
    const double on_path_sr = scheme.overlap_p2p_comm ? 0.0 : 1.0;
    t_fwd[stage] += fwd + op_fwd_box[i] + on_path_sr * op_fwd_sr[i];
    t_bwd[stage] += bwd + op_bwd_box[i] + on_path_sr * op_bwd_sr[i];
    compute_mb[stage] += fwd + bwd;
    comm_mb[stage] += op_fwd_box[i] + op_bwd_box[i] + op_fwd_sr[i] + op_bwd_sr[i];
    sendrecv_mb[stage] += op_fwd_sr[i] + op_bwd_sr[i];
    r.per_op[i] = {op.name, signature_string(graph, op, sig), stage, m * (fwd + bwd),
                   m * (op_fwd_box[i] + op_bwd_box[i] + op_fwd_sr[i] + op_bwd_sr[i]), 0};
  }

  if (scheme.overlap_p2p_comm) {
    for (int s = 0; s < S; ++s) {
      const double exposed = std::max(0.0, sendrecv_mb[s] - compute_mb[s]);
      t_fwd[s] += exposed;
      comm_mb[s] += exposed - sendrecv_mb[s];
      sendrecv_mb[s] = exposed;
    }
  }
  for (int s = 0; s < S; ++s) {
    t_bwd[s] += stage_extra_bwd[s];
    comm_mb[s] += stage_extra_bwd[s];
    sendrecv_mb[s] += stage_extra_bwd[s];
  }
  // Gradient readiness: the last micro-batch's backward walks ops in reverse order per stage.
  std::vector<double> param_gather_s(S, 0);
  std::vector<double> ready_at(n_ops, 0);
  for (int i = n_ops - 1; i >= 0; --i) {
    int s = stage_of(i);
    bwd_clock[s] += op_bwd_compute[i] + op_bwd_box[i] + op_bwd_sr[i];
    ready_at[i] = bwd_clock[s];
  }
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
    double sync_total = 0;
    double exposed = sync_buckets(uniq, scheme.bucket_bytes, bwd_clock[s], sbp_mesh, stage_once[s], sync_total,
                                  plan ? &plan->buckets[s] : nullptr);
    r.grad_sync_exposed_s = std::max(r.grad_sync_exposed_s, exposed);
    r.grad_sync_s = std::max(r.grad_sync_s, sync_total);
    for (const GradSync& g : uniq) r.per_op[g.op].grad_sync_s += g.table->time_s(g.from, g.to);
    // The all-gather of updated shards follows the optimizer step, exposed (Megatron overlaps it
    // with the next forward only with --overlap-param-gather).
    std::vector<GradSync> upd;
    std::set<int> seen_param;
    for (const GradSync& g : gathers[s]) {
      if (seen_param.insert(g.tensor).second) upd.push_back(g);
    }
    double gather_total = 0;
    param_gather_s[s] = sync_buckets(upd, scheme.bucket_bytes, 0, sbp_mesh, stage_once[s], gather_total,
                                     plan ? &plan->param_gathers[s] : nullptr);
  }

  // Memory per stage.
  const double opt_bpp = optimizer_bytes_per_param(train_dtype);
  std::vector<double> param_mem(S, 0), act_mem(S, 0), transient(S, 0), local_params(S, 0);
  std::vector<int> param_stage(n_tensors, -1);
  for (int i = 0; i < n_ops; ++i) {
    const Op& op = graph.ops[i];
    const OpSignature& sig = scheme.op_sigs[i];
    const int s = stage_of(i);
    double gathered = 0;
    for (int k = 0; k < sig.n_in; ++k) {
      const int t = op.inputs[k];
      const Tensor& tensor = graph.tensors[t];
      if (tensor.role != TensorRole::parameter) continue;
      const NdSbp& st = scheme.param_storage[t];
      double use_local = local_bytes(sig.in[k], sbp_shape.data(), static_cast<double>(tensor.bytes()));
      double store_local = local_bytes(st, sbp_shape.data(), static_cast<double>(tensor.bytes()));
      gathered += std::max(0.0, use_local - store_local);
      if (param_stage[t] == s) continue;
      param_stage[t] = s;
      double elems = store_local / dtype_bytes(tensor.dtype);
      // ZeRO-1: each replica of a parameter updates only its share of the optimizer state, so
      // the state is split over every dim where the parameter is stored broadcast.
      double opt_split = 1;
      if (scheme.shard_optimizer) {
        for (int d = 0; d < nd; ++d) {
          if (st.dims[d].is_broadcast()) opt_split *= sbp_shape[d];
        }
      }
      param_mem[s] += 2 * store_local + elems * opt_bpp / opt_split;
      local_params[s] += elems / opt_split;  // each replica steps only its shard
    }
    transient[s] = std::max(transient[s], gathered);
  }
  // Saved activations of one micro-batch, at their producer's SBP: what backward reads
  // (activation_memory.hpp); full recompute holds one block's recomputed tensors at a time.
  const ActivationFactors af = activation_factors(graph, scheme.recompute);
  std::vector<double> block_act(S, 0);
  std::map<std::pair<int, std::string>, double> per_block;
  for (int i = 0; i < n_ops; ++i) {
    const Op& op = graph.ops[i];
    const int s = stage_of(i);
    for (size_t o = 0; o < op.outputs.size(); ++o) {
      const int t = op.outputs[o];
      if (af.kept[t] == 0 && af.recomputed[t] == 0) continue;
      const double local = local_bytes(scheme.op_sigs[i].out[o], sbp_shape.data(), bytes_mb[t]);
      act_mem[s] += af.kept[t] * local;
      if (af.recomputed[t] > 0) per_block[{s, op.block}] += af.recomputed[t] * local;
    }
  }
  for (const auto& [key, bytes] : per_block) block_act[key.first] = std::max(block_act[key.first], bytes);
  r.peak_memory_bytes = 0;
  int peak_stage = 0;
  for (int s = 0; s < S; ++s) {
    double in_flight = 1;
    if (S > 1) {
      if (scheme.schedule == PipelineSchedule::gpipe) in_flight = m;
      else in_flight = std::min<double>(m, S - s) * (v > 1 ? 1.0 + (S - 1.0) / (S * v) : 1.0);
    }
    double total = param_mem[s] + act_mem[s] * in_flight + block_act[s] + transient[s];
    if (total > r.peak_memory_bytes) {
      r.peak_memory_bytes = total;
      r.param_memory_bytes = param_mem[s];
      r.activation_memory_bytes = act_mem[s] * in_flight + block_act[s];
      peak_stage = s;
    }
  }
  r.memory_capacity_bytes = cluster.gpu.memory_bytes;
  if (r.peak_memory_bytes > r.memory_capacity_bytes) {
    r.feasible = false;
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "peak memory %.1f GB exceeds the %.1f GB of a %s%s (parameters, gradients and "
                  "optimizer %.1f GB, activations %.1f GB)",
                  r.peak_memory_bytes / 1e9, r.memory_capacity_bytes / 1e9, cluster.gpu.name.c_str(),
                  S > 1 ? (" on stage " + std::to_string(peak_stage)).c_str() : "",
                  r.param_memory_bytes / 1e9, r.activation_memory_bytes / 1e9);
    r.infeasible_reason = buf;
  }

  // Iteration time.
  int slow = 0;
  for (int s = 1; s < S; ++s) {
    if (t_fwd[s] + t_bwd[s] > t_fwd[slow] + t_bwd[slow]) slow = s;
  }
  const double T = t_fwd[slow] + t_bwd[slow];
  r.stage_time_s = T;
  double opt_step = 0;
  for (int s = 0; s < S; ++s) {
    const double step = optimizer_step_s(cluster.gpu, local_params[s], train_dtype);
    opt_step = std::max(opt_step, step + param_gather_s[s]);
    if (plan) {
      plan->optimizer_s[s] = step;
      plan->optimizer_params[s] = local_params[s];
    }
  }
  if (S > 1) {
    r.bubble_s = (S - 1.0) / (scheme.schedule == PipelineSchedule::interleaved ? v : 1) * T;
  }
  r.iteration_s = m * T + r.bubble_s + r.grad_sync_exposed_s + opt_step;
  r.compute_s = m * compute_mb[slow] + opt_step - param_gather_s[slow];
  r.comm_exposed_s = m * comm_mb[slow] + r.grad_sync_exposed_s + param_gather_s[slow];
  r.send_recv_s = m * sendrecv_mb[slow];
  for (int i = 0; i < n_ops; ++i) {
    if (stage_of(i) != slow) continue;
    r.fwd_boxing_s += m * op_fwd_box[i];
    r.bwd_boxing_s += m * op_bwd_box[i];
  }
  r.comm = stage_mb[slow].scaled(m);
  r.comm += stage_once[slow];
  r.model_flops_per_iteration = 3 * graph.forward_flops();
  if (r.iteration_s > 0) {
    r.samples_per_s = graph.batch / r.iteration_s;
    r.model_tflops_per_gpu = r.model_flops_per_iteration / r.iteration_s / r.devices / 1e12;
  }
  return r;
}

}  // namespace autoddl::costmodel
