// BiasAdd: y = x + b with b(c) broadcast along axis `axis` of x (default last: Linear layers;
// axis 1 for NCHW convolution outputs). Forward 1 FLOP per element; backward passes dy through
// to dx unchanged (no kernel) and reduces it to db (1 FLOP per element).
#include "kinds.hpp"

namespace autoddl::costmodel::ops {

std::vector<Shape> bias_add_shapes(const Graph& g, const Op& op) {
  const Shape& x = input(g, op, 0).shape;
  const Shape& b = input(g, op, 1).shape;
  require_rank(g, op, 0, 1, "at least 1-D");
  int axis = normalize_axis(g, op, op.attrs.axis, x.size(), "axis");
  if (b.size() != 1 || b[0] != x[axis]) {
    fail_input(g, op, 1,
               "has shape " + shape_str(b) + " but the bias must be [" + std::to_string(x[axis]) +
                   "] (axis " + std::to_string(axis) + " of " + shape_str(x) + ")");
  }
  return {x};
}

OpWork bias_add_work(const Graph& g, const Op& op) {
  const Tensor& y = output(g, op, 0);
  OpWork w;
  w.fwd_flops = elements_of(y);
  w.fwd_bytes = bytes_of(input(g, op, 0)) + bytes_of(input(g, op, 1)) + bytes_of(y);
  if (needs_grad(g, op, 1)) {
    w.bwd_flops = elements_of(y);
    w.bwd_bytes = bytes_of(y) + bytes_of(input(g, op, 1));
  }
  return w;
}

// dx = dy and db = Σ dy: nothing is kept.
SavedForBackward bias_add_saved(const Graph&, const Op&) { return {}; }

// SBP rule (sbp-and-search.md §2.2; the all-B signature is added for every op by
// signatures_1d()).
// y = x + b along `axis` of x.
void bias_add_sbp(const Graph& g, const Op& op, std::vector<Signature1D>& out) {
  using namespace sbp_rule;
  const int r = rank_in(g, op, 0);
  const int ax = norm_axis(op.attrs.axis, r);
  for (int i = 0; i < r; ++i) {
    out.push_back(i == ax ? sig({S(i), S(0)}, {S(i)}) : sig({S(i), B}, {S(i)}));
  }
  out.push_back(sig({P, P}, {P}));  // the bias added once: B→P keeps it on one device
}

// The kind's row of the op table (op_registry.hpp).
OpKindInfo bias_add_kind() {
  return {.kind = OpKind::bias_add, .name = "bias_add", .min_inputs = 2, .max_inputs = 2, .infer_shapes = bias_add_shapes,
          .work = bias_add_work, .sbp_rules = bias_add_sbp, .saved = bias_add_saved};
}

}  // namespace autoddl::costmodel::ops
