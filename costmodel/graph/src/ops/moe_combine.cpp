// MoE combine (Megatron-Core's un-permutation after the experts): y(C, E, h) and the router's
// probabilities p(b, s..., E) -> (b, s..., h), each token the p-weighted sum of its top_k
// experts' outputs. Backward: dy (the weighted gradient scattered back to the slots) and dp
// (each selected expert's output dotted with the token's gradient), so both inputs are kept.
// SBP mirrors moe_dispatch: slots split -> the token axis the probabilities are split on (the
// reverse all-to-all brings expert-split outputs back to their tokens' ranks first).
#include "kinds.hpp"

namespace autoddl::costmodel::ops {

std::vector<Shape> moe_combine_shapes(const Graph& g, const Op& op) {
  const Shape& y = input(g, op, 0).shape;
  require_rank(g, op, 1, 3, "(batch, tokens..., experts)");
  const Shape& p = input(g, op, 1).shape;
  if (y.size() != 3) fail_input(g, op, 0, "has shape " + shape_str(y) + " but must be (slots, experts, h)");
  if (p.back() != y[1]) {
    fail_input(g, op, 1, "has " + std::to_string(p.back()) + " experts but the expert outputs " + shape_str(y) +
                             " have " + std::to_string(y[1]));
  }
  Shape out(p.begin(), p.end() - 1);
  out.push_back(y[2]);
  return {out};
}

OpWork moe_combine_work(const Graph& g, const Op& op) {
  const Tensor& y = input(g, op, 0);
  const Tensor& p = input(g, op, 1);
  const Tensor& out = output(g, op, 0);
  OpWork w;
  w.fwd_flops = 2 * elements_of(y);  // multiply by the weight, add into the token
  w.fwd_bytes = bytes_of(y) + bytes_of(p) + bytes_of(out);
  if (needs_grad(g, op, 0)) w.bwd_flops += elements_of(y), w.bwd_bytes += bytes_of(out) + bytes_of(p) + bytes_of(y);
  if (needs_grad(g, op, 1)) w.bwd_flops += 2 * elements_of(y), w.bwd_bytes += bytes_of(y) + bytes_of(out) + bytes_of(p);
  return w;
}

SavedForBackward moe_combine_saved(const Graph&, const Op&) {
  SavedForBackward s;
  s.inputs = 3u;
  return s;
}

// y(C, E, h), p(b, s..., E) -> (b, s..., h)
void moe_combine_sbp(const Graph& g, const Op& op, std::vector<Signature1D>& out) {
  using namespace sbp_rule;
  const int r = rank_in(g, op, 1);
  for (int i = 0; i + 1 < r; ++i) out.push_back(sig({S(0), S(i)}, {S(i)}));  // slots -> tokens
  out.push_back(sig({S(2), B}, {S(r - 1)}));                                 // hidden
  out.push_back(sig({P, B}, {P}));                                           // linear in y
}

OpKindInfo moe_combine_kind() {
  return {.kind = OpKind::moe_combine, .name = "moe_combine", .min_inputs = 2, .max_inputs = 2,
          .infer_shapes = moe_combine_shapes, .work = moe_combine_work, .sbp_rules = moe_combine_sbp,
          .saved = moe_combine_saved, .moe = MoeBoundary::leaves};
}

}  // namespace autoddl::costmodel::ops
