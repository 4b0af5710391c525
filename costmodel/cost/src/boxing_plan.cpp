// Phase "boxing plan" of evaluate() (see boxing_plan.hpp): which reader of a tensor is charged
// its boxing, gradient and send, the states of every conversion, and their seconds and
// collectives per micro-batch, in op order.
#include "autoddl/costmodel/boxing_plan.hpp"
#include "autoddl/costmodel/op_registry.hpp"
#include "autoddl/costmodel/sm_contention.hpp"

#include <algorithm>

namespace autoddl::costmodel {

namespace {

// Per (op, input): whether this reader is charged the forward boxing, the stage send and the
// gradient boxing of its tensor. Gradients of a tensor read by several ops (Q, K and V read one
// LayerNorm) are summed locally when they share an SBP, then boxed once: only the first such
// reader (in forward order, i.e. the last backward) is charged. Likewise forward: a tensor is
// boxed once per stage and target SBP and the result shared by its readers there, and sent to
// another stage once, however many ops read it there.
struct Charges {
  std::vector<char> fwd, send, grad;
};

Charges charges(const Graph& graph, const Scheme& scheme, const std::vector<int>& op_stage) {
  const int n_ops = static_cast<int>(graph.ops.size());
  const size_t n_tensors = graph.tensors.size();
  Charges c;
  c.fwd.assign(static_cast<size_t>(n_ops) * kMaxOpInputs, 1);
  c.send.assign(c.fwd.size(), 1);
  c.grad.assign(c.fwd.size(), 1);
  std::vector<std::vector<std::pair<int, NdSbp>>> seen(n_tensors), boxed(n_tensors);
  std::vector<std::vector<int>> sent(n_tensors);
  for (int i = 0; i < n_ops; ++i) {
    const Op& op = graph.ops[i];
    const int st = op_stage[i];
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      const int t = op.inputs[k];
      if (graph.tensors[t].producer < 0) continue;
      const size_t q = static_cast<size_t>(i) * kMaxOpInputs + k;
      const NdSbp& g = scheme.op_sigs[i].in_grad[k];
      bool dup = false;
      for (const auto& [s2, g2] : seen[t]) dup = dup || (s2 == st && g2 == g);
      if (dup) c.grad[q] = 0;
      else seen[t].push_back({st, g});
      if (graph.tensors[t].role == TensorRole::parameter) continue;
      const NdSbp& want = scheme.op_sigs[i].in[k];
      dup = false;
      for (const auto& [s2, w2] : boxed[t]) dup = dup || (s2 == st && w2 == want);
      if (dup) c.fwd[q] = 0;
      else boxed[t].push_back({st, want});
      if (std::find(sent[t].begin(), sent[t].end(), st) != sent[t].end()) c.send[q] = 0;
      else sent[t].push_back(st);
    }
  }
  return c;
}

// Whether op i's input k is gathered into a weight GEMM from a smaller layout, so that backward
// gathers it again for the weight gradient: the tensor is kept as the shard (stage_memory), as
// Megatron-LM's sequence parallelism keeps the LayerNorm output sequence-split and all-gathers it
// again before the QKV and FC1 weight gradients (LinearWithGradAccumulationAndAsyncCommunication;
// Transformer Engine's LayerNormLinear): 6 all-gathers per layer and micro-batch, not 4.
bool regathered_for_weight_gradient(const Graph& graph, const Scheme& scheme, const EvalFrame& f, int i, int k,
                                    const NdSbp& produced) {
  const Op& op = graph.ops[i];
  if (k != 0 || !multiplies_weight(graph, op)) return false;
  const double bytes = f.bytes_mb[op.inputs[0]];
  return local_bytes(scheme.op_sigs[i].in[k], f.sbp_shape.data(), bytes) > local_bytes(produced, f.sbp_shape.data(), bytes);
}

// Reader c's data-gradient GEMM: half of its backward.
double data_gradient_gemm_s(const OpCompute& c) { return (c.bwd_s - c.recompute_s) / 2; }

// The data-gradient GEMMs of t's readers as `layout`. The re-gather is launched before them and
// waited for before the weight gradients, so only what runs longer is exposed (Megatron-LM's
// async all-gather; TE's bulk overlap of the all-gather with the dgrad GEMM under
// --tp-comm-overlap).
double data_gradient_gemms_s(const Graph& graph, const Scheme& scheme, const std::vector<OpCompute>& compute, int t,
                             const NdSbp& layout) {
  double s = 0;
  for (int c : graph.consumers[t]) {
    if (regather_reader(graph, scheme, c, t, layout)) s += data_gradient_gemm_s(compute[c]);
  }
  return s;
}

int state(const BoxingTable& table, const NdSbp& s, const std::string& what) {
  const int idx = table.index_of(s);
  if (idx < 0) scheme_error(what, to_string(s) + " does not divide the tensor's micro-batch shape");
  return idx;
}


}  // namespace

std::vector<int> fsdp_layers(const Graph& graph, const std::vector<int>& op_stage) {
  std::vector<int> layer(graph.ops.size(), 0);
  for (size_t i = 1; i < graph.ops.size(); ++i) {
    const bool same = graph.ops[i].block == graph.ops[i - 1].block && op_stage[i] == op_stage[i - 1];
    layer[i] = layer[i - 1] + (same ? 0 : 1);
  }
  return layer;
}

bool regather_reader(const Graph& graph, const Scheme& scheme, int reader, int t, const NdSbp& layout) {
  const Op& op = graph.ops[reader];
  return multiplies_weight(graph, op) && op.inputs[0] == t && scheme.op_sigs[reader].in[0] == layout;
}

BoxingPlan plan_boxing(const Graph& graph, const Scheme& scheme, const EvalFrame& f,
                       const std::vector<OpCompute>& compute, BoxingCache& cache, IterationPlan* plan) {
  const int n_ops = static_cast<int>(graph.ops.size());
  const int S = f.stages;
  const int nd = f.sbp_dims();
  const int m = f.micro_batches;
  const Charges charged = charges(graph, scheme, f.op_stage);
  BoxingPlan bp;
  bp.ops.resize(n_ops);
  bp.inputs.resize(static_cast<size_t>(n_ops) * kMaxOpInputs);
  bp.stage_tally.resize(S);
  bp.stage_extra_bwd_s.assign(S, 0);
  // tp_overlap (Scheme::overlap_tp_comm): GEMM time of each matmul not yet spent hiding a
  // collective, forward and backward. The all-gather into a matmul's activation input hides
  // under that matmul; the reduce-scatter of its output (boxed at the consumer's input) under
  // the producing matmul; their backward mirrors under the matching backward GEMMs. Only the
  // critical-path time shrinks; the tallies keep every collective.
  std::vector<double> gemm_fwd_left, gemm_bwd_left;
  if (scheme.overlap_tp_comm) {
    gemm_fwd_left.assign(n_ops, 0);
    gemm_bwd_left.assign(n_ops, 0);
    for (int i = 0; i < n_ops; ++i) {
      if (!op_kind_info(graph.ops[i].kind).gemm) continue;
      gemm_fwd_left[i] = compute[i].fwd_s;
      gemm_bwd_left[i] = compute[i].bwd_s;
    }
  }
  // The first collective hidden under a GEMM pass also exposes what splitting that GEMM into
  // chunks costs (OpCompute::tp_chunk_fwd/bwd_extra_s).
  std::vector<char> chunked_fwd, chunked_bwd;
  if (scheme.overlap_tp_comm) {
    chunked_fwd.assign(n_ops, 0);
    chunked_bwd.assign(n_ops, 0);
  }
  // `under` (may be null) receives the GEMM op the collective hides under; the plan records
  // what hides and what is charged per GEMM pass, for a replay that runs them side by side.
  auto hide_under = [&](bool fwd, int consumer, int producer, double comm_s, int* under) {
    if (!scheme.overlap_tp_comm || comm_s <= 0) return comm_s;
    std::vector<double>& left = fwd ? gemm_fwd_left : gemm_bwd_left;
    std::vector<char>& chunked = fwd ? chunked_fwd : chunked_bwd;
    for (int op_id : {consumer, producer}) {
      if (!op_kind_info(graph.ops[op_id].kind).gemm) continue;
      const double hidden = std::min(comm_s, left[op_id]);
      left[op_id] -= hidden;
      // A backward collective hidden under the consumer's GEMM is userbuffers' bulk
      // reduce-scatter beside the weight-gradient GEMM: it slows it by its SMs' share.
      double extra = !fwd && op_id == consumer ? hidden * compute[op_id].tp_bwd_sm_share : 0;
      if (!chunked[op_id]) {
        chunked[op_id] = 1;
        extra += fwd ? compute[op_id].tp_chunk_fwd_extra_s : compute[op_id].tp_chunk_bwd_extra_s;
      }
      if (plan) {
        PlannedOp& g = plan->ops[op_id];
        (fwd ? g.tp_fwd_hidden_s : g.tp_bwd_hidden_s) += hidden;
        (fwd ? g.tp_fwd_extra_s : g.tp_bwd_extra_s) += extra;
      }
      if (under) *under = op_id;
      return comm_s - hidden + extra;
    }
    return comm_s;
  };
  // Context parallelism's KV exchange (OpBoxing::kv_exchange_s): with the p2p ring
  // (Scheme::overlap_cp_comm) each of the cp-1 steps' sends runs under the previous step's
  // attention block, so it hides under (cp-1)/cp of the attention's forward (K, V) and backward
  // (K, V again, dK and dV) compute, shared by what crosses in that pass.
  std::vector<double> ring_fwd_left(n_ops, 0), ring_bwd_left(n_ops, 0);
  std::vector<int> cp_ranks(n_ops, 1);
  for (int i = 0; i < n_ops; ++i) {
    cp_ranks[i] = sequence_split_ranks(graph.ops[i], scheme.op_sigs[i], f.sbp_shape.data());
    if (cp_ranks[i] < 2 || !scheme.overlap_cp_comm) continue;
    const double steps = static_cast<double>(cp_ranks[i] - 1) / cp_ranks[i];
    ring_fwd_left[i] = steps * compute[i].fwd_s;
    ring_bwd_left[i] = steps * (compute[i].bwd_s - compute[i].recompute_s);
  }
  // FSDP (Scheme::fsdp): ops in runs of one block label on one stage are a layer, whose
  // parameters FSDP gathers together. A layer's forward gather is prefetched under the previous
  // layer's forward compute, its backward re-gather under the next layer's backward (which runs
  // before it), so each hides under what that layer's compute has left; the first layer's
  // forward gather and the last layer's backward one have nothing before them. The hidden part
  // still runs NCCL's CTAs beside the compute (sm_contention.hpp).
  std::vector<int> layer;
  std::vector<double> layer_fwd_left, layer_bwd_left;
  std::vector<int> layer_stage;
  if (scheme.fsdp) {
    layer = fsdp_layers(graph, f.op_stage);
    const size_t layers = n_ops > 0 ? static_cast<size_t>(layer.back()) + 1 : 0;
    layer_fwd_left.assign(layers, 0);
    layer_bwd_left.assign(layers, 0);
    layer_stage.assign(layers, 0);
    for (int i = 0; i < n_ops; ++i) {
      layer_fwd_left[layer[i]] += compute[i].fwd_s;
      layer_bwd_left[layer[i]] += compute[i].bwd_s;
      layer_stage[layer[i]] = f.op_stage[i];
    }
  }
  // Seconds of FSDP's gather `from` -> `to` exposed when it is prefetched under layer `under`'s
  // remaining compute `left` (no such layer on this stage: all of it), plus what its NCCL kernel's
  // SMs cost that compute, which is also added to `sm_s` (the plan's record).
  auto prefetched = [&](const BoxingTable& table, int from, int to, std::vector<double>& left, int under, int stage,
                        double* sm_s) {
    const double gather = table.time_s(from, to);
    if (under < 0 || under >= static_cast<int>(left.size()) || layer_stage[under] != stage) return gather;
    const double hidden = std::min(gather, left[under]);
    left[under] -= hidden;
    int channels = 0;
    for (const BoxingStep& st : table.path(from, to)) {
      channels = std::max(channels, f.split.sbp_mesh.collective(st.dim, st.kind, st.bytes).channels);
    }
    const double sm = sm_contention_s(hidden, channels, f.sm_count);
    if (sm_s) *sm_s += sm;
    return gather - hidden + sm;
  };
  auto under_ring = [&](std::vector<double>& left, int i, double comm_s) {
    const double hidden = std::min(comm_s, left[i]);
    left[i] -= hidden;
    return comm_s - hidden;
  };
  for (int i = 0; i < n_ops; ++i) {
    const Op& op = graph.ops[i];
    const OpSignature& sig = scheme.op_sigs[i];
    const int stage = f.op_stage[i];
    OpBoxing& ob = bp.ops[i];
    const bool kv_reader = cp_ranks[i] > 1;
    CommTally& tally = bp.stage_tally[stage];
    PlannedOp* pop = plan ? &plan->ops[i] : nullptr;
    for (int k = 0; k < sig.n_in; ++k) {
      const int t = op.inputs[k];
      const Tensor& tensor = graph.tensors[t];
      const size_t q = static_cast<size_t>(i) * kMaxOpInputs + k;
      InputBoxing& in = bp.inputs[q];
      if (tensor.role == TensorRole::parameter) {
        const NdSbp& st = scheme.param_storage[t];
        if (st.ndims != nd) scheme_error("param_storage " + tensor.name, "not over the SBP mesh dims");
        const BoxingTable& table = cache.get(tensor.shape, static_cast<double>(tensor.bytes()), exact_block_order(tensor));
        in.table = &table;
        in.from = state(table, st, "param_storage " + tensor.name);
        in.to = state(table, sig.in[k], "op " + op.name);
        const double gather = table.time_s(in.from, in.to);
        if (pop) {
          pop->inputs[k].role = InputRole::parameter;
          pop->inputs[k].tensor = t;
        }
        if (gather > 0) {
          ob.fwd_s += scheme.fsdp ? prefetched(table, in.from, in.to, layer_fwd_left, layer[i] - 1, stage,
                                               pop ? &pop->fsdp_fwd_sm_s : nullptr)
                                  : gather;
          table.tally(in.from, in.to, tally);
          if (pop) {
            pop->inputs[k].fwd = table.path(in.from, in.to);
            pop->inputs[k].fwd_route = table.route(in.from, in.to);
          }
          if (param_gather_runs(scheme.regather_in_backward) > 1) {
            ob.bwd_s += scheme.fsdp ? prefetched(table, in.from, in.to, layer_bwd_left, layer[i] + 1, stage,
                                                 pop ? &pop->fsdp_bwd_sm_s : nullptr)
                                    : gather;
            table.tally(in.from, in.to, tally);
            if (pop) pop->inputs[k].bwd = table.path(in.from, in.to);
          }
        }
        in.grad = state(table, sig.in_grad[k], "op " + op.name + " gradient");
        continue;
      }
      const int j = tensor.producer;
      if (j < 0) {  // graph inputs are loaded in whatever SBP the op wants
        if (pop) pop->inputs[k].tensor = t;
        continue;
      }
      const OpSignature& psig = scheme.op_sigs[j];
      const int o = f.out_slot[t];
      const BoxingTable& table = cache.get(f.shape_mb[t], f.bytes_mb[t]);
      in.table = &table;
      in.from = state(table, psig.out[o], "op " + graph.ops[j].name);
      in.to = state(table, sig.in[k], "op " + op.name);
      const bool box_here = charged.fwd[q] != 0;
      const bool kv = kv_reader && k > 0;
      if (box_here && kv) {
        // The keys and values gathered whole for the attention are kept as the shards they were
        // made in (stage_memory) and gathered again for its backward, as the ring passes them
        // round again there (Megatron-Core's AttnFuncWithCPAndKVP2P).
        const double box = table.time_s(in.from, in.to);
        const double fwd = under_ring(ring_fwd_left, i, box), bwd = under_ring(ring_bwd_left, i, box);
        ob.fwd_s += fwd;
        ob.bwd_s += bwd;
        ob.kv_exchange_s += fwd + bwd;
        ob.kv_exchange_total_s += 2 * box;
        table.tally(in.from, in.to, tally);
        if (box > 0) table.tally(in.from, in.to, tally);
        if (pop) {
          pop->inputs[k].fwd = table.path(in.from, in.to);
          pop->inputs[k].fwd_route = table.route(in.from, in.to);
          pop->inputs[k].bwd_regather = table.path(in.from, in.to);
          pop->inputs[k].bwd_regather_exposed_s = bwd;
        }
      } else if (box_here) {
        const double box = table.time_s(in.from, in.to);
        ob.fwd_s += hide_under(true, i, j, box, pop ? &pop->inputs[k].fwd_hidden_under : nullptr);
        table.tally(in.from, in.to, tally);
        if (forward_boxing_runs(compute[i].recompute) > 1) {
          ob.bwd_s += box;
          table.tally(in.from, in.to, tally);
        } else if (box > 0 && regathered_for_weight_gradient(graph, scheme, f, i, k, psig.out[o])) {
          const double dgrad_s = data_gradient_gemms_s(graph, scheme, compute, t, sig.in[k]);
          const double exposed = std::max(0.0, box - dgrad_s);
          ob.bwd_s += exposed;
          // Under tp_overlap the data-gradient GEMMs that hide the re-gather are spent on it:
          // Transformer Engine runs the bulk all-gather beside the dgrad GEMM and the input
          // gradient's reduce-scatter beside the wgrad GEMM (LayerNormLinear's ub_bulk_dgrad and
          // ub_bulk_wgrad), so that reduce-scatter hides only under what the re-gather left of
          // the readers' backward, not under the whole of it again.
          if (scheme.overlap_tp_comm && dgrad_s > 0) {
            const double used = (box - exposed) / dgrad_s;
            for (int c : graph.consumers[t]) {
              if (!regather_reader(graph, scheme, c, t, sig.in[k])) continue;
              gemm_bwd_left[c] = std::max(0.0, gemm_bwd_left[c] - used * data_gradient_gemm_s(compute[c]));
            }
          }
          table.tally(in.from, in.to, tally);
          if (pop) {
            pop->inputs[k].bwd_regather = table.path(in.from, in.to);
            pop->inputs[k].bwd_regather_exposed_s = exposed;
          }
        }
      }
      const bool cross = f.op_stage[j] != stage;
      const bool send_here = cross && charged.send[q];
      PlannedInput* pin = pop ? &pop->inputs[k] : nullptr;
      if (pin) {
        pin->role = InputRole::activation;
        pin->tensor = t;
        pin->producer = j;
        // Only the reader that carries the stage's one send of this tensor is marked; later
        // readers on that stage run after it and use the received copy.
        pin->cross_stage = send_here;
        if (in.from != in.to && box_here && !kv) {
          pin->fwd = table.path(in.from, in.to);
          pin->fwd_route = table.route(in.from, in.to);
        }
      }
      // One stage-to-stage send of this tensor's local piece (forward) or its summed gradient
      // (backward), charged to op i; the plan records bytes and seconds where it is recorded.
      // The gathers run on the receiving stage: this op's (forward) or the producer's (backward).
      auto send = [&](const NdSbp& piece, double& op_sr, double* plan_bytes, double* plan_s,
                      std::vector<BoxingStep>* plan_gather, int receiver) {
        const double local = local_bytes(piece, f.sbp_shape.data(), f.bytes_mb[t]);
        // Scatter/gather: replicas of the piece each send a 1/r share, the receivers
        // all-gather it dim by dim over the replicated dims.
        double share = local;
        std::vector<int> gather_dims;
        if (scheme.scatter_gather_sends) {
          for (int d = 0; d < nd; ++d) {
            if (piece.dims[d].is_broadcast() && f.sbp_shape[d] > 1) {
              gather_dims.push_back(d);
              share /= f.sbp_shape[d];
            }
          }
        }
        const double sr = stage_send_s(f.split.tier, share);
        op_sr += sr;
        tally.add(CollectiveKind::send_recv, sr, share);
        double gathered = share;
        for (int d : gather_dims) {
          gathered *= f.sbp_shape[d];
          BoxingStep step;
          boxing_step_1d(f.split.sbp_mesh, d, Sbp::split(0), Sbp::broadcast(), gathered, step);
          if (receiver == stage) {
            op_sr += step.time_s;
          } else {  // the producer's stage, on its row
            bp.stage_extra_bwd_s[receiver] += step.time_s;
            bp.producer_gather_s.push_back({j, m * step.time_s});
          }
          bp.stage_tally[receiver].add(step.kind, step.time_s, step.wire_bytes);
          if (plan_gather) plan_gather->push_back(step);
        }
        if (plan_bytes) *plan_bytes = share;
        if (plan_s) *plan_s = sr;
      };
      if (send_here) {
        send(psig.out[o], ob.fwd_send_s, pin ? &pin->fwd_send_bytes : nullptr, pin ? &pin->fwd_send_s : nullptr,
             pin ? &pin->fwd_send_gather : nullptr, stage);
      }
      if (has_gradient(tensor) && charged.grad[q]) {
        in.grad = state(table, sig.in_grad[k], "op " + op.name + " gradient");
        in.grad_to = state(table, psig.out_grad[o], "op " + graph.ops[j].name + " gradient");
        if (kv) {
          const double rs = table.time_s(in.grad, in.grad_to);
          const double exposed = under_ring(ring_bwd_left, i, rs);
          ob.bwd_s += exposed;
          ob.kv_exchange_s += exposed;
          ob.kv_exchange_total_s += rs;
        } else {
          ob.bwd_s += hide_under(false, i, j, table.time_s(in.grad, in.grad_to),
                                 pin ? &pin->bwd_hidden_under : nullptr);
        }
        table.tally(in.grad, in.grad_to, tally);
        if (pin && in.grad != in.grad_to) {
          pin->bwd = table.path(in.grad, in.grad_to);
          pin->bwd_route = table.route(in.grad, in.grad_to);
        }
        // The stage's gradients of this tensor are summed locally and sent back once.
        if (send_here) {
          if (pin) pin->bwd_send = true;
          send(sig.in_grad[k], ob.bwd_send_s, pin ? &pin->bwd_send_bytes : nullptr, pin ? &pin->bwd_send_s : nullptr,
               pin ? &pin->bwd_send_gather : nullptr, f.op_stage[j]);
        }
      }
    }
  }
  return bp;
}

}  // namespace autoddl::costmodel
