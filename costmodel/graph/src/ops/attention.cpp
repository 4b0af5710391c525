// Attention: fused scaled-dot-product attention, softmax(Q·Kᵀ/√d)·V over q, k, v of shape
// (batch, heads, seq, head_dim), as FlashAttention-2 runs it (Dao 2023): one kernel forward,
// one backward, the s×s scores never written to HBM. `causal` masks the future (GPT): the
// kernel skips masked tiles, so forward and backward do half the matmul FLOPs. k and v may have
// fewer heads than q, each shared by heads/kv_heads query heads (grouped-query attention,
// Ainslie et al. 2023; Llama 2 70B and Llama 3): FLOPs are per query head, as the kernel runs.
// v may have its own head size (DeepSeek's multi-head latent attention: q, k 192, v 128), which
// the output takes. FLOPs: forward 2·b·a·s²·(d_qk + d_v), 4·b·a·s²·d when they agree (Q·Kᵀ, P·V); backward 2.5× forward (recomputing Q·Kᵀ, then dV,
// dP, dQ, dK: five matmuls against two). Bytes: q, k, v, o and the per-row log-sum-exp (fp32).
// Backward keeps q, k, v and o (FlashAttention's saved tensors): no s² activation. o is counted
// where the output projection keeps its input (in Megatron-LM a view of o, one storage).
#include "kinds.hpp"

namespace autoddl::costmodel::ops {

std::vector<Shape> attention_shapes(const Graph& g, const Op& op) {
  for (int i = 0; i < 3; ++i) require_rank(g, op, i, 4, "(batch, heads, seq, head_dim)");
  const Shape& q = input(g, op, 0).shape;
  const Shape& k = input(g, op, 1).shape;
  const Shape& v = input(g, op, 2).shape;
  if (k[0] != v[0] || k[1] != v[1] || k[2] != v[2]) {
    fail_input(g, op, 2, "has shape " + shape_str(v) + " but k is " + shape_str(k) + " (only head_dim may differ)");
  }
  if (k[0] != q[0] || k[3] != q[3] || k[1] < 1 || q[1] % k[1] != 0) {
    fail_input(g, op, 1, "has shape " + shape_str(k) + ": batch and head_dim must match q's " + shape_str(q) +
                             " and its heads divide q's");
  }
  Shape out = q;
  out[3] = v[3];
  return {out};
}

OpWork attention_work(const Graph& g, const Op& op) {
  const Shape& q = input(g, op, 0).shape;
  const Shape& k = input(g, op, 1).shape;
  const double b = static_cast<double>(q[0]), a = static_cast<double>(q[1]);
  const double sq = static_cast<double>(q[2]), sk = static_cast<double>(k[2]);
  const double d_qk = static_cast<double>(q[3]), d_v = static_cast<double>(input(g, op, 2).shape[3]);
  const double causal = op.attrs.causal ? 0.5 : 1.0;
  const double qkvo = bytes_of(input(g, op, 0)) + bytes_of(input(g, op, 1)) + bytes_of(input(g, op, 2)) +
                      bytes_of(output(g, op, 0));
  const double lse = 4 * b * a * sq;
  OpWork w;
  w.fwd_flops = 2 * b * a * sq * sk * (d_qk + d_v) * causal;
  w.fwd_bytes = qkvo + lse;
  bool grad = false;
  for (int i = 0; i < 3; ++i) grad = grad || needs_grad(g, op, i);
  if (grad) {
    w.bwd_flops = 2.5 * w.fwd_flops;
    w.bwd_bytes = 2 * qkvo + lse;  // reads q, k, v, o, dO; writes dQ, dK, dV
  }
  return w;
}

SavedForBackward attention_saved(const Graph& g, const Op&) {
  SavedForBackward s;
  s.inputs = 7u;  // q, k, v (o: see the header)
  // With FP8 GEMMs the projection keeps an FP8 copy of its input, no longer a view of o, so o
  // is kept here as well.
  s.output = g.fp8_gemms;
  return s;
}

// SBP rule (sbp-and-search.md §2.2; the all-B signature is added for every op by
// signatures_1d()).
// Fused attention over (batch, heads, seq, head_dim): batch or heads split (data or tensor
// parallel; Megatron splits heads), all replicated, or context parallel: the queries split
// over the sequence against every key and value (Megatron-Core's context parallelism; the keys
// and values gathered into it are its KV exchange, all-gathered or passed round a ring).
// Causal attention's work per rank is the mean share because Megatron-Core hands each rank
// two sequence chunks, i and 2cp-1-i (load balancing): the split is taken on that permuted
// order, which every position-wise op before and after attention does not see.
void attention_sbp(const Graph&, const Op&, std::vector<Signature1D>& out) {
  using namespace sbp_rule;
  out.push_back(sig({S(0), S(0), S(0)}, {S(0)}));
  out.push_back(sig({S(1), S(1), S(1)}, {S(1)}));
  out.push_back(sig({S(2), B, B}, {S(2)}));
}

// The kind's row of the op table (op_registry.hpp).
OpKindInfo attention_kind() {
  return {.kind = OpKind::attention, .name = "attention", .min_inputs = 3, .max_inputs = 3, .infer_shapes = attention_shapes,
          .work = attention_work, .sbp_rules = attention_sbp, .saved = attention_saved};
}

}  // namespace autoddl::costmodel::ops
