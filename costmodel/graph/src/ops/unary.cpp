// Elementwise unary ops: relu, gelu, dropout, tanh, sigmoid, silu; y has x's shape. FLOPs per
// element are conventional estimates (not measured): relu 1 fwd / 1 bwd; gelu (tanh form,
// Hendrycks & Gimpel 2016) 8 / 12; dropout 2 (mask, scale) / 1; tanh 4 / 2 (1 − y²);
// sigmoid 4 / 3 (y·(1 − y)); silu x·σ(x) (Llama's SwiGLU gate) 5 / 7 (σ, then σ + x·σ·(1 − σ)). Dropout also writes (fwd) and reads (bwd) a 1-byte mask.
#include "kinds.hpp"

namespace autoddl::costmodel::ops {

namespace {
struct UnaryCost {
  UnaryFn fn;
  double fwd_flops_per_element, bwd_flops_per_element;
};
constexpr UnaryCost kCosts[] = {
    {UnaryFn::relu, 1, 1}, {UnaryFn::gelu, 8, 12},   {UnaryFn::dropout, 2, 1},
    {UnaryFn::tanh, 4, 2}, {UnaryFn::sigmoid, 4, 3}, {UnaryFn::silu, 5, 7},
};

const UnaryCost& cost_of(UnaryFn fn) {
  for (const UnaryCost& c : kCosts) {
    if (c.fn == fn) return c;
  }
  return kCosts[0];
}
}  // namespace

std::vector<Shape> unary_shapes(const Graph& g, const Op& op) {
  if (!is_float(input(g, op, 0).dtype)) {
    fail_input(g, op, 0, "must be a floating-point tensor");
  }
  return {input(g, op, 0).shape};
}

OpWork unary_work(const Graph& g, const Op& op) {
  const UnaryCost& c = cost_of(op.attrs.unary);
  const Tensor& x = input(g, op, 0);
  const Tensor& y = output(g, op, 0);
  double n = elements_of(y);
  double mask_bytes = op.attrs.unary == UnaryFn::dropout ? n : 0;
  OpWork w;
  w.fwd_flops = c.fwd_flops_per_element * n;
  w.fwd_bytes = bytes_of(x) + bytes_of(y) + mask_bytes;
  if (needs_grad(g, op, 0)) {
    w.bwd_flops = c.bwd_flops_per_element * n;
    // reads dy and the saved x (or y, or the mask), writes dx
    w.bwd_bytes = bytes_of(y) + (mask_bytes > 0 ? mask_bytes : bytes_of(x)) + bytes_of(x);
  }
  return w;
}

// relu, tanh and sigmoid differentiate through their output, gelu and silu through their input, dropout
// through its 1-byte mask (Korthikanti et al. 2022 count the mask, not the output).
SavedForBackward unary_saved(const Graph&, const Op& op) {
  SavedForBackward s;
  switch (op.attrs.unary) {
    case UnaryFn::gelu:
    case UnaryFn::silu: s.inputs = 1u; break;
    case UnaryFn::dropout: s.mask_bytes_per_element = 1; break;
    case UnaryFn::relu:
    case UnaryFn::tanh:
    case UnaryFn::sigmoid: s.output = true; break;
  }
  return s;
}

// SBP rule (sbp-and-search.md §2.2; the all-B signature is added for every op by
// signatures_1d()).
void unary_sbp(const Graph& g, const Op& op, std::vector<Signature1D>& out) {
  using namespace sbp_rule;
  const int r = rank_in(g, op, 0);
  for (int i = 0; i < r; ++i) out.push_back(sig({S(i)}, {S(i)}));
  // relu, gelu, tanh, sigmoid are nonlinear; dropout draws one mask per element, which a
  // partial sum would apply to each device's part: no P→P for any unary.
}

// The kind's row of the op table (op_registry.hpp).
OpKindInfo unary_kind() {
  return {.kind = OpKind::unary, .name = "unary", .min_inputs = 1, .max_inputs = 1, .infer_shapes = unary_shapes,
          .work = unary_work, .sbp_rules = unary_sbp, .saved = unary_saved};
}

}  // namespace autoddl::costmodel::ops
