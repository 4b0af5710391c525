// Transpose: y = x permuted by `perm` (y.shape[i] = x.shape[perm[i]]), e.g. attention's
// (batch, seq, heads, d) -> (batch, heads, seq, d). A copy kernel: no FLOPs, reads and writes
// every element forward, and the inverse permutation of dy backward.
#include "kinds.hpp"

namespace autoddl::costmodel::ops {

std::vector<Shape> transpose_shapes(const Graph& g, const Op& op) {
  const Shape& x = input(g, op, 0).shape;
  const std::vector<int>& perm = op.attrs.perm;
  if (perm.size() != x.size()) {
    fail(g, op,
         "perm has " + std::to_string(perm.size()) + " axes but the input " + shape_str(x) +
             " has " + std::to_string(x.size()));
  }
  std::vector<bool> seen(x.size(), false);
  Shape out(x.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    int p = perm[i];
    if (p < 0 || p >= static_cast<int>(x.size()) || seen[p]) {
      fail(g, op, "perm is not a permutation of 0.." + std::to_string(x.size() - 1));
    }
    seen[p] = true;
    out[i] = x[p];
  }
  return {out};
}

OpWork transpose_work(const Graph& g, const Op& op) {
  double b = bytes_of(input(g, op, 0));
  OpWork w;
  w.fwd_bytes = 2 * b;
  if (needs_grad(g, op, 0)) w.bwd_bytes = 2 * b;
  return w;
}

// A view: nothing is kept.
SavedForBackward transpose_saved(const Graph&, const Op&) { return {}; }

// SBP rule (sbp-and-search.md §2.2; the all-B signature is added for every op by
// signatures_1d()).
void transpose_sbp(const Graph&, const Op& op, std::vector<Signature1D>& out) {
  using namespace sbp_rule;
  for (size_t j = 0; j < op.attrs.perm.size(); ++j) {
    out.push_back(sig({S(op.attrs.perm[j])}, {S(static_cast<int>(j))}));
  }
  out.push_back(sig({P}, {P}));
}

// The kind's row of the op table (op_registry.hpp).
OpKindInfo transpose_kind() {
  return {.kind = OpKind::transpose, .name = "transpose", .min_inputs = 1, .max_inputs = 1, .infer_shapes = transpose_shapes,
          .work = transpose_work, .sbp_rules = transpose_sbp, .saved = transpose_saved};
}

}  // namespace autoddl::costmodel::ops
