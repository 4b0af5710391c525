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

}  // namespace autoddl::costmodel::ops
