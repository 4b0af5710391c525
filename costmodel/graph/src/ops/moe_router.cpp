// MoE router (Shazeer et al. 2017; Megatron-Core's TopKRouter): the gating GEMM x(..., h) ·
// W(h, E) -> (..., E), then softmax (Mixtral, Qwen3, GPT-OSS) or sigmoid (DeepSeek-V3) and the
// top-k selection, one op: its output is the routing probabilities the combine weighs experts by
// (the unselected ones are zeros that the combine skips). The softmax/top-k pass is charged as
// two more reads and a write of the (..., E) scores. Megatron-Core keeps the router weight
// replicated across tensor-parallel ranks (not a TE Linear: never FP8), each rank routing its
// own tokens, so the rule splits tokens only.
#include "kinds.hpp"

namespace autoddl::costmodel::ops {

std::vector<Shape> moe_router_shapes(const Graph& g, const Op& op) {
  require_rank(g, op, 0, 2, "(..., h)");
  const Shape& x = input(g, op, 0).shape;
  const Shape& w = input(g, op, 1).shape;
  if (w.size() != 2 || w[0] != x.back()) {
    fail_input(g, op, 1, "has shape " + shape_str(w) + " but the router weight must be (h, experts) with h = " +
                             std::to_string(x.back()));
  }
  Shape out(x.begin(), x.end() - 1);
  out.push_back(w[1]);
  return {out};
}

OpWork moe_router_work(const Graph& g, const Op& op) {
  const Tensor& x = input(g, op, 0);
  const Tensor& w = input(g, op, 1);
  const Tensor& y = output(g, op, 0);
  const double flops = 2.0 * elements_of(x) * static_cast<double>(w.shape[1]);
  OpWork k;
  k.fwd_flops = flops;
  k.fwd_bytes = bytes_of(x) + bytes_of(w) + 3 * bytes_of(y);  // GEMM, then softmax + top-k
  if (needs_grad(g, op, 0)) k.bwd_flops += flops, k.bwd_bytes += bytes_of(y) + bytes_of(w) + bytes_of(x);
  if (needs_grad(g, op, 1)) k.bwd_flops += flops, k.bwd_bytes += bytes_of(x) + bytes_of(y) + bytes_of(w);
  k.bwd_bytes += 2 * bytes_of(y);  // softmax backward
  return k;
}

// dX needs W, dW needs X, the softmax backward its output.
SavedForBackward moe_router_saved(const Graph& g, const Op& op) {
  SavedForBackward s;
  if (needs_grad(g, op, 1)) s.inputs |= 1u;
  if (needs_grad(g, op, 0)) s.inputs |= 2u;
  s.output = true;
  return s;
}

GemmDims moe_router_gemm_dims(const Shape& a, const Shape& b, const OpAttrs&) {
  GemmDims d;
  d.m = product(a, 0, a.size() - 1);
  d.k = a.back();
  d.n = b[1];
  return d;
}

// x(..., h), W(h, E) -> (..., E): tokens split on any token axis; a split of h or E would need
// the whole row of scores before the softmax, so there is none.
void moe_router_sbp(const Graph& g, const Op& op, std::vector<Signature1D>& out) {
  using namespace sbp_rule;
  const int r = rank_in(g, op, 0);
  for (int i = 0; i + 1 < r; ++i) out.push_back(sig({S(i), B}, {S(i)}));
}

OpKindInfo moe_router_kind() {
  return {.kind = OpKind::moe_router, .name = "moe_router", .min_inputs = 2, .max_inputs = 2,
          .infer_shapes = moe_router_shapes, .work = moe_router_work, .sbp_rules = moe_router_sbp,
          .saved = moe_router_saved, .gemm = true, .gemm_dims = moe_router_gemm_dims, .fp8_gemm = false};
}

}  // namespace autoddl::costmodel::ops
