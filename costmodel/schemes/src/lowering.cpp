// Lowering of per-dim roles (data / tensor / expert / context) to per-op nd signatures (see expert_schemes.hpp).
// Ops are visited in topological order; on each SBP dim the role's rule picks one of the op's
// 1-D signatures given the SBPs its inputs were produced in on that dim; the picks combine into
// an nd signature whose backward follows from the forward.
#include <algorithm>
#include <limits>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/op_registry.hpp"

namespace autoddl::costmodel {

std::vector<bool> batch_major_tensors(const Graph& graph) {
  std::vector<bool> bm(graph.tensors.size(), false);
  for (size_t t = 0; t < graph.tensors.size(); ++t) {
    const Tensor& x = graph.tensors[t];
    bm[t] = x.role == TensorRole::input && !x.shape.empty() && x.shape[0] == graph.batch;
  }
  for (const Op& op : graph.ops) {
    bool any = false;
    for (int t : op.inputs) any = any || bm[t];
    for (int t : op.outputs) bm[t] = any && !graph.tensors[t].shape.empty();
  }
  return bm;
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Relative cost of a 1-D conversion of a tensor of `bytes` (ring bytes on the wire per device),
// enough to rank candidates on one dim; the cost model prices the result for real.
double unit_boxing(Sbp from, Sbp to, double bytes, int p) {
  if (from == to) return 0;
  if (from.is_partial() && to.is_broadcast()) return 2 * bytes + 1;  // all-reduce
  if (from.is_split() && to.is_broadcast()) return bytes + 1;        // all-gather
  if (from.is_partial() && to.is_split()) return bytes + 1;          // reduce-scatter
  if (from.is_split() && to.is_split()) return bytes / p + 1;        // all-to-all
  return 0;                                                           // local
}

struct Ctx {
  const Graph& graph;
  const std::vector<bool>& batch_major;
  const std::vector<bool>& expert_major;
  const std::vector<bool>& expert_param;
  const std::vector<Shape>& shape_mb;
  const std::vector<double>& bytes_mb;
  const LoweringOptions& opt;
};

bool is_param(const Graph& g, int t) { return g.tensors[t].role == TensorRole::parameter; }

bool split_divides(const Shape& shape, Sbp s, int p) {
  if (!s.is_split()) return true;
  return s.axis < static_cast<int>(shape.size()) && shape[s.axis] % p == 0;
}

// Data parallel: batch-major tensors split on the batch axis, parameters broadcast, other
// tensors broadcast (outputs may be partial: a loss summed over the local batch).
double data_score(const Ctx& c, const Op& op, const Signature1D& s, const std::vector<Sbp>& produced,
                  int p) {
  double score = 0;
  for (size_t k = 0; k < op.inputs.size(); ++k) {
    int t = op.inputs[k];
    Sbp want = is_param(c.graph, t) || !c.batch_major[t] ? Sbp::broadcast() : Sbp::split(0);
    if (!(s.in[k] == want)) score += 10;
    if (!is_param(c.graph, t) && c.graph.tensors[t].producer >= 0 && !(s.in[k] == produced[t])) score += 1;
    if (!split_divides(c.shape_mb[t], s.in[k], p)) return kInf;
  }
  for (size_t o = 0; o < op.outputs.size(); ++o) {
    int t = op.outputs[o];
    bool ok = c.batch_major[t] ? s.out[o] == Sbp::split(0) : !s.out[o].is_split();
    if (!ok) score += 10;
    if (!split_divides(c.shape_mb[t], s.out[o], p)) return kInf;
  }
  return score;
}

// Tensor (model) parallel on one dim, Megatron-style; see expert_schemes.hpp.
double tensor_score(const Ctx& c, const Op& op, const Signature1D& s, const std::vector<Sbp>& produced,
                    const std::vector<bool>& has_storage, int p) {
  const Graph& g = c.graph;
  const OpKindInfo& kind = op_kind_info(op.kind);
  // Which input is the activation of a weight-bearing matmul / embedding.
  int param_slot = -1;
  for (size_t k = 0; k < op.inputs.size(); ++k) {
    if (is_param(g, op.inputs[k])) param_slot = static_cast<int>(k);
  }
  double score = 0;
  for (size_t k = 0; k < op.inputs.size(); ++k) {
    const int t = op.inputs[k];
    const Sbp want = s.in[k];
    if (!split_divides(c.shape_mb[t], want, p)) return kInf;
    if (is_param(g, t)) {
      if (has_storage[t] && !(want == produced[t])) score += 1e-3 * c.bytes_mb[t] + 1;  // tied weights
      continue;
    }
    const Sbp have = produced[t];
    const int rank = static_cast<int>(c.shape_mb[t].size());
    const bool loaded = g.tensors[t].producer < 0;  // graph input: loaded in any SBP for free
    // Megatron-Core reduce-scatters the experts' partial output over the expert-tensor-parallel
    // ranks before the all-to-all back (MoEAlltoAllTokenDispatcher), so the all-to-all carries
    // 1/etp of it; carrying the partial sum through the combine would send all of it.
    if (c.expert_major[t] && kind.moe == MoeBoundary::leaves && want.is_partial()) return kInf;
    if (c.expert_major[t] && want.is_split()) {
      // (slots, experts, h): the experts belong to expert-parallel dims; the slots may stay
      // split as the dispatch made them (the combine reduce-scatters back into them).
      if (want.axis == 1) return kInf;
    } else if (c.batch_major[t] && want.is_split()) {
      if (want.axis == 0) return kInf;  // the batch belongs to data-parallel dims
      bool seq = rank == 3 && want.axis == 1;
      if (seq && !c.opt.sequence_parallel) return kInf;
      // A non-GEMM op keeps splits, it does not create them (except sp's sequence split).
      bool creates = !(have == want);
      if (creates && !loaded && !kind.gemm && !(seq && c.opt.sequence_parallel)) return kInf;
    }
    if (!loaded) score += unit_boxing(have, want, c.bytes_mb[t], p);
  }
  bool partial_in = false;
  int partial_activations = 0;
  for (size_t k = 0; k < op.inputs.size(); ++k) {
    const int t = op.inputs[k];
    partial_in |= produced[t].is_partial();
    if (produced[t].is_partial() && !is_param(g, t)) ++partial_activations;
  }
  // Megatron-LM reduces a partial sum where it is made: RowParallelLinear all-reduces (with sp:
  // reduce-scatters) its GEMM's output before the bias add (skip_bias_add, fused into
  // bias-dropout-add), VocabParallelEmbedding before the position embeddings. So a non-GEMM op
  // that would carry one partial input on as a partial output is charged the reduction it only
  // defers, plus one: the reduction lands at its input, next to the GEMM, where tp_overlap can
  // hide it. An op summing several partial inputs (parallel branches) still keeps P, which saves
  // a reduction.
  const bool defers_reduction = partial_activations == 1 && !kind.gemm && kind.tp_weight == TpWeight::none;
  for (size_t o = 0; o < op.outputs.size(); ++o) {
    const int t = op.outputs[o];
    if (!split_divides(c.shape_mb[t], s.out[o], p)) return kInf;
    // A partial output that no input forced will cost an all-reduce downstream; count it now
    // so that, e.g., a residual add of two broadcast tensors stays broadcast.
    if (s.out[o].is_partial() && !partial_in && kind.tp_weight == TpWeight::none) {
      score += unit_boxing(Sbp::partial(), Sbp::broadcast(), c.bytes_mb[t], p);
    }
    if (s.out[o].is_partial() && defers_reduction) {
      const bool seq = c.opt.sequence_parallel && c.batch_major[t] && c.shape_mb[t].size() == 3;
      score += unit_boxing(Sbp::partial(), seq ? Sbp::split(1) : Sbp::broadcast(), c.bytes_mb[t], p) + 1;
    }
    if (c.expert_major[t]) {
      if (s.out[o].is_split() && s.out[o].axis == 1) return kInf;
      continue;
    }
    if (c.batch_major[t] && s.out[o].is_split() && s.out[o].axis == 0) return kInf;
    if (c.batch_major[t] && s.out[o].is_split() && s.out[o].axis == 1 &&
        c.shape_mb[t].size() == 3 && !c.opt.sequence_parallel) {
      return kInf;
    }
  }
  if (param_slot >= 0 && kind.tp_weight != TpWeight::none) {
    const Sbp w = s.in[param_slot];
    if (!w.is_split()) return kInf;  // Megatron splits every weight matrix and embedding
    if (kind.tp_weight == TpWeight::vocab_rows) {
      if (w.axis != 0) return kInf;  // vocab-parallel
    } else {
      const int act = 1 - param_slot;
      const int t = op.inputs[act];
      const Sbp have = produced[t];
      const int last = static_cast<int>(c.shape_mb[t].size()) - 1;
      const bool row = have.is_split() && have.axis == last;
      if (row != (s.in[act].is_split() && s.in[act].axis == last)) return kInf;
      if (!row && !s.in[act].is_broadcast()) return kInf;
    }
  }
  return score;
}

// Expert parallel on one dim, for the MoE ops (see DimRole::expert): expert-major tensors
// split on the experts axis, except the dispatch's output and the combine's input, which hold
// the local token slots (the all-to-all between the two is a boxing); expert weights split on
// their experts axis; the other tensors (tokens, routing scores, the router) keep the split
// they were produced in, and the combine's output returns to it.
double expert_score(const Ctx& c, const Op& op, const Signature1D& s, const std::vector<Sbp>& produced, int p) {
  const Graph& g = c.graph;
  const MoeBoundary boundary = op_kind_info(op.kind).moe;
  constexpr double kMiss = 1e18;  // a missed want outweighs any boxing's bytes
  double score = 0;
  Sbp token_split = Sbp::broadcast();  // how the op's dense activations arrive
  for (size_t k = 0; k < op.inputs.size(); ++k) {
    const int t = op.inputs[k];
    if (!split_divides(c.shape_mb[t], s.in[k], p)) return kInf;
    Sbp want = produced[t];
    if (is_param(g, t)) {
      want = c.expert_param[t] ? Sbp::split(0) : Sbp::broadcast();
    } else if (c.expert_major[t]) {
      want = boundary == MoeBoundary::leaves ? Sbp::split(0) : Sbp::split(1);
    } else if (produced[t].is_split()) {
      token_split = produced[t];
    }
    if (!(s.in[k] == want)) score += kMiss;
    if (!is_param(g, t) && g.tensors[t].producer >= 0) score += unit_boxing(produced[t], s.in[k], c.bytes_mb[t], p);
  }
  for (size_t o = 0; o < op.outputs.size(); ++o) {
    const int t = op.outputs[o];
    if (!split_divides(c.shape_mb[t], s.out[o], p)) return kInf;
    Sbp want = token_split;
    if (c.expert_major[t]) want = boundary == MoeBoundary::enters ? Sbp::split(0) : Sbp::split(1);
    if (!(s.out[o] == want)) score += kMiss;
  }
  return score;
}

// Context parallel on one dim (DimRole::context), Megatron-Core's --context-parallel-size: the
// graph inputs that carry the batch (tokens, labels, (batch, seq, ...)) are loaded split on the
// sequence axis; every other activation keeps the split it was produced in, or is gathered whole
// where no signature keeps it (fused attention's keys and values: the KV exchange). A split never
// moves to another axis (that would be Ulysses' all-to-all, cp_comm_type a2a, not modelled).
// Parameters are read broadcast, or sliced for free (GPT's position embedding added to a
// sequence-split stream); their gradients are partial, so the gradient sync spans dp × cp.
double context_score(const Ctx& c, const Op& op, const Signature1D& s, const std::vector<Sbp>& produced, int p) {
  const Graph& g = c.graph;
  double score = 0;
  for (size_t k = 0; k < op.inputs.size(); ++k) {
    const int t = op.inputs[k];
    const Sbp want = s.in[k];
    if (!split_divides(c.shape_mb[t], want, p)) return kInf;
    if (is_param(g, t)) {
      if (want.is_partial()) return kInf;
      if (want.is_split()) score += 1;
      continue;
    }
    if (g.tensors[t].producer < 0) {
      const bool seq = c.batch_major[t] && c.shape_mb[t].size() >= 2;
      if (!(want == (seq ? Sbp::split(1) : Sbp::broadcast()))) score += 10;
      continue;
    }
    const Sbp have = produced[t];
    if (want == have) continue;
    // A whole activation read split is a free local slice: GPT's and BERT's learned position
    // embedding, looked up whole (its indices carry no batch), added to the sequence-split stream.
    if (have.is_broadcast() && want.is_split()) continue;
    if (!(have.is_split() && want.is_broadcast())) return kInf;
    score += unit_boxing(have, want, c.bytes_mb[t], p);
  }
  for (size_t o = 0; o < op.outputs.size(); ++o) {
    const int t = op.outputs[o];
    if (!split_divides(c.shape_mb[t], s.out[o], p)) return kInf;
    const bool keeps = c.batch_major[t] && c.shape_mb[t].size() >= 2;
    if (keeps != s.out[o].is_split()) score += 10;
  }
  return score;
}

}  // namespace

std::vector<OpSignature> lower_roles(const Graph& graph, const std::vector<int>& sbp_shape,
                                     const std::vector<DimRole>& roles, int micro_batches,
                                     const LoweringOptions& opt) {
  const int nd = static_cast<int>(sbp_shape.size());
  AUTODDL_CHECK(static_cast<int>(roles.size()) == nd) << "one role per SBP dim";
  const int n_t = static_cast<int>(graph.tensors.size());
  const std::vector<bool> bm = batch_major_tensors(graph);
  std::vector<Shape> shape_mb(n_t);
  std::vector<double> bytes_mb(n_t);
  for (int t = 0; t < n_t; ++t) {
    shape_mb[t] = micro_batch_shape(graph.tensors[t], micro_batches);
    double e = 1;
    for (int64_t x : shape_mb[t]) e *= static_cast<double>(x);
    bytes_mb[t] = e * dtype_bytes(graph.tensors[t].dtype);
  }
  const std::vector<bool> em = expert_major_tensors(graph);
  const std::vector<bool> ep = expert_parameters(graph);
  Ctx ctx{graph, bm, em, ep, shape_mb, bytes_mb, opt};
  AUTODDL_CHECK(opt.expert_roles.empty() || static_cast<int>(opt.expert_roles.size()) == nd)
      << "one expert role per SBP dim";
  AUTODDL_CHECK(std::find(roles.begin(), roles.end(), DimRole::expert) == roles.end())
      << "the expert role applies to MoE ops only (LoweringOptions::expert_roles)";
  // Per dim: the SBP each tensor was produced (activations) or stored (parameters) in.
  std::vector<std::vector<Sbp>> produced(nd, std::vector<Sbp>(n_t, Sbp::broadcast()));
  std::vector<std::vector<bool>> has_storage(nd, std::vector<bool>(n_t, false));
  int first_matmul = static_cast<int>(graph.ops.size());
  for (size_t i = 0; i < graph.ops.size(); ++i) {
    if (op_kind_info(graph.ops[i].kind).gemm) {
      first_matmul = static_cast<int>(i);
      break;
    }
  }

  std::vector<OpSignature> sigs;
  sigs.reserve(graph.ops.size());
  for (size_t i = 0; i < graph.ops.size(); ++i) {
    const Op& op = graph.ops[i];
    const std::vector<Signature1D> cands = signatures_1d(graph, op);
    bool moe_op = false;
    for (int t : op.inputs) moe_op = moe_op || em[t];
    for (int t : op.outputs) moe_op = moe_op || em[t];
    OpSignature sig;
    sig.n_in = static_cast<int>(op.inputs.size());
    sig.n_out = static_cast<int>(op.outputs.size());
    for (int k = 0; k < sig.n_in; ++k) sig.in[k].ndims = static_cast<uint8_t>(nd);
    for (int o = 0; o < sig.n_out; ++o) sig.out[o].ndims = static_cast<uint8_t>(nd);
    // A candidate on dim d must divide together with the splits already chosen on dims < d.
    auto fits_with_earlier_dims = [&](const Signature1D& c, int d) {
      OpSignature trial = sig;
      for (int k = 0; k < sig.n_in; ++k) {
        trial.in[k].ndims = static_cast<uint8_t>(d + 1);
        trial.in[k].dims[d] = c.in[k];
        if (!divides(trial.in[k], sbp_shape.data(), shape_mb[op.inputs[k]])) return false;
      }
      for (int o = 0; o < sig.n_out; ++o) {
        trial.out[o].ndims = static_cast<uint8_t>(d + 1);
        trial.out[o].dims[d] = c.out[o];
        if (!divides(trial.out[o], sbp_shape.data(), shape_mb[op.outputs[o]])) return false;
      }
      return true;
    };
    for (int d = 0; d < nd; ++d) {
      const int p = sbp_shape[d];
      DimRole role = moe_op && !opt.expert_roles.empty() ? opt.expert_roles[d] : roles[d];
      if (opt.conv_data_parallel && static_cast<int>(i) < first_matmul) role = DimRole::data;
      double best = kInf;
      size_t pick = cands.size() - 1;  // all-B (always present, last after the kind's rules)
      for (size_t ci = 0; ci < cands.size(); ++ci) {
        double sc = p == 1                   ? (ci == cands.size() - 1 ? 0 : kInf)
                    : role == DimRole::data   ? data_score(ctx, op, cands[ci], produced[d], p)
                    : role == DimRole::expert ? expert_score(ctx, op, cands[ci], produced[d], p)
                    : role == DimRole::context ? context_score(ctx, op, cands[ci], produced[d], p)
                                              : tensor_score(ctx, op, cands[ci], produced[d], has_storage[d], p);
        if (sc < best && !fits_with_earlier_dims(cands[ci], d)) sc = kInf;
        if (sc < best) {
          best = sc;
          pick = ci;
        }
      }
      if (best == kInf) {
        // No signature fits the role: run the op replicated on this dim and box into it.
        for (size_t ci = 0; ci < cands.size(); ++ci) {
          bool all_b = true;
          for (int k = 0; k < sig.n_in; ++k) all_b = all_b && cands[ci].in[k].is_broadcast();
          for (int o = 0; o < sig.n_out; ++o) all_b = all_b && cands[ci].out[o].is_broadcast();
          if (all_b) pick = ci;
        }
      }
      const Signature1D& c = cands[pick];
      for (int k = 0; k < sig.n_in; ++k) {
        sig.in[k].dims[d] = c.in[k];
        const int t = op.inputs[k];
        if (graph.tensors[t].role == TensorRole::parameter && !has_storage[d][t]) {
          produced[d][t] = c.in[k];
          has_storage[d][t] = true;
        }
      }
      for (int o = 0; o < sig.n_out; ++o) {
        sig.out[o].dims[d] = c.out[o];
        produced[d][op.outputs[o]] = c.out[o];
      }
    }
    for (int k = 0; k < sig.n_in; ++k) {
      if (!divides(sig.in[k], sbp_shape.data(), shape_mb[op.inputs[k]])) {
        throw InputError("--scheme", "op " + op.name,
                         "no signature fits: " + to_string(sig.in[k]) + " does not divide " +
                             graph.tensors[op.inputs[k]].name + " on mesh dims");
      }
    }
    for (int o = 0; o < sig.n_out; ++o) {
      if (!divides(sig.out[o], sbp_shape.data(), shape_mb[op.outputs[o]])) {
        throw InputError("--scheme", "op " + op.name,
                         "no signature fits: " + to_string(sig.out[o]) + " does not divide " +
                             graph.tensors[op.outputs[o]].name);
      }
    }
    derive_backward(sig, sbp_shape.data(), batch_free_outputs(graph, op));
    sigs.push_back(sig);
  }
  return sigs;
}

}  // namespace autoddl::costmodel
