// Concat: joins inputs of equal rank along `axis` (default last); all other axes must agree
// (NCF joins its GMF and MLP towers this way). A copy: no FLOPs; forward reads every input and
// writes the output, backward slices dy back into the inputs that need a gradient.
#include "kinds.hpp"

namespace autoddl::costmodel::ops {

std::vector<Shape> concat_shapes(const Graph& g, const Op& op) {
  const Shape& first = input(g, op, 0).shape;
  require_rank(g, op, 0, 1, "at least 1-D");
  int axis = normalize_axis(g, op, op.attrs.axis, first.size(), "axis");
  Shape out = first;
  for (int i = 1; i < static_cast<int>(op.inputs.size()); ++i) {
    const Shape& s = input(g, op, i).shape;
    bool fits = s.size() == first.size();
    for (size_t d = 0; fits && d < s.size(); ++d) {
      if (static_cast<int>(d) != axis && s[d] != first[d]) fits = false;
    }
    if (!fits) {
      fail_input(g, op, i,
                 "has shape " + shape_str(s) + ", which differs from " + shape_str(first) +
                     " outside the concat axis " + std::to_string(axis));
    }
    out[axis] += s[axis];
  }
  return {out};
}

OpWork concat_work(const Graph& g, const Op& op) {
  const Tensor& y = output(g, op, 0);
  OpWork w;
  w.fwd_bytes = bytes_of(y);
  for (int i = 0; i < static_cast<int>(op.inputs.size()); ++i) {
    w.fwd_bytes += bytes_of(input(g, op, i));
    if (needs_grad(g, op, i)) w.bwd_bytes += 2 * bytes_of(input(g, op, i));
  }
  return w;
}

// dY is sliced back: nothing is kept.
SavedForBackward concat_saved(const Graph&, const Op&) { return {}; }

// SBP rule (sbp-and-search.md §2.2; the all-B signature is added for every op by
// signatures_1d()).
void concat_sbp(const Graph& g, const Op& op, std::vector<Signature1D>& out) {
  using namespace sbp_rule;
  const int r = rank_in(g, op, 0);
  const int ax = norm_axis(op.attrs.axis, r);
  const int n = static_cast<int>(op.inputs.size());
  for (int i = 0; i < r; ++i) {
    if (i == ax) continue;
    Signature1D s;
    for (int k = 0; k < n; ++k) s.in[k] = S(i);
    s.out[0] = S(i);
    out.push_back(s);
  }
  Signature1D p;
  for (int k = 0; k < n; ++k) p.in[k] = P;
  p.out[0] = P;
  out.push_back(p);
}

// The kind's row of the op table (op_registry.hpp). Signatures hold a fixed number of operands
// (signature.hpp), so concat takes at most that many.
OpKindInfo concat_kind() {
  return {.kind = OpKind::concat, .name = "concat", .min_inputs = 2, .max_inputs = kMaxOpInputs, .infer_shapes = concat_shapes,
          .work = concat_work, .sbp_rules = concat_sbp, .saved = concat_saved};
}

}  // namespace autoddl::costmodel::ops
