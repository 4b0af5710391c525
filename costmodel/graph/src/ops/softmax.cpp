// Softmax over `axis` (default last). Attention's 1/√d scaling and causal/padding mask are taken
// as fused into this kernel, as in Megatron-LM's fused scale-mask-softmax. FLOPs per element:
// 5 forward (max, subtract, exp, sum, divide), 4 backward (dx = y·(dy − Σ dy·y)).
#include "kinds.hpp"

namespace autoddl::costmodel::ops {

namespace {
constexpr double kFwdFlopsPerElement = 5;
constexpr double kBwdFlopsPerElement = 4;
}  // namespace

std::vector<Shape> softmax_shapes(const Graph& g, const Op& op) {
  const Tensor& x = input(g, op, 0);
  require_rank(g, op, 0, 1, "at least 1-D");
  if (!is_float(x.dtype)) fail_input(g, op, 0, "must be a floating-point tensor");
  normalize_axis(g, op, op.attrs.axis, x.shape.size(), "axis");
  return {x.shape};
}

OpWork softmax_work(const Graph& g, const Op& op) {
  const Tensor& x = input(g, op, 0);
  const Tensor& y = output(g, op, 0);
  OpWork w;
  w.fwd_flops = kFwdFlopsPerElement * elements_of(y);
  w.fwd_bytes = bytes_of(x) + bytes_of(y);
  if (needs_grad(g, op, 0)) {
    w.bwd_flops = kBwdFlopsPerElement * elements_of(y);
    w.bwd_bytes = 2 * bytes_of(y) + bytes_of(x);  // reads y and dy, writes dx
  }
  return w;
}

// dx = y ⊙ (dy − Σ dy·y): the output is kept.
SavedForBackward softmax_saved(const Graph&, const Op&) {
  SavedForBackward s;
  s.output = true;
  return s;
}

// SBP rule (sbp-and-search.md §2.2; the all-B signature is added for every op by
// signatures_1d()).
void softmax_sbp(const Graph& g, const Op& op, std::vector<Signature1D>& out) {
  using namespace sbp_rule;
  const int r = rank_in(g, op, 0);
  const int ax = norm_axis(op.attrs.axis, r);
  for (int i = 0; i < r; ++i) {
    if (i != ax) out.push_back(sig({S(i)}, {S(i)}));
  }
}

// The kind's row of the op table (op_registry.hpp).
OpKindInfo softmax_kind() {
  return {.kind = OpKind::softmax, .name = "softmax", .min_inputs = 1, .max_inputs = 1, .infer_shapes = softmax_shapes,
          .work = softmax_work, .sbp_rules = softmax_sbp, .saved = softmax_saved};
}

}  // namespace autoddl::costmodel::ops
