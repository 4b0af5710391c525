// Reshape (and Flatten): same elements in a new shape. The new shape is the declared shape of
// the output tensor (the graph carries no separate attribute); the rule checks that it holds
// as many elements as the input. A reshape of a contiguous tensor is a view: no FLOPs, no bytes.
#include "kinds.hpp"

namespace autoddl::costmodel::ops {

std::vector<Shape> reshape_shapes(const Graph& g, const Op& op) {
  if (op.outputs.size() != 1) fail(g, op, "a reshape has exactly one output");
  const Tensor& x = input(g, op, 0);
  const Tensor& y = output(g, op, 0);
  if (x.elements() != y.elements()) {
    fail_output(g, op, 0,
                "shape " + shape_str(y.shape) + " holds " + std::to_string(y.elements()) +
                    " elements but the input " + shape_str(x.shape) + " holds " +
                    std::to_string(x.elements()));
  }
  return {y.shape};
}

OpWork reshape_work(const Graph&, const Op&) { return {}; }

// A view: nothing is kept.
SavedForBackward reshape_saved(const Graph&, const Op&) { return {}; }

// SBP rule (sbp-and-search.md §2.2; the all-B signature is added for every op by
// signatures_1d()).
// A split of input axis i maps to output axis j when both start at the same flat offset
// (equal products of the leading axes) and one extent divides the other, so the pieces are
// the same contiguous blocks; divisibility by the mesh size is checked on both shapes later.
void reshape_sbp(const Graph& g, const Op& op, std::vector<Signature1D>& out) {
  using namespace sbp_rule;
  const Shape& x = shape_in(g, op, 0);
  const Shape& y = shape_out(g, op, 0);
  int64_t px = 1;
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t py = 1;
    for (size_t j = 0; j < y.size(); ++j) {
      if (py == px && x[i] > 1 && y[j] > 1 && (x[i] % y[j] == 0 || y[j] % x[i] == 0)) {
        out.push_back(sig({S(static_cast<int>(i))}, {S(static_cast<int>(j))}));
        break;
      }
      py *= y[j];
      if (py > px) break;
    }
    px *= x[i];
  }
  out.push_back(sig({P}, {P}));
}

// The kind's row of the op table (op_registry.hpp).
OpKindInfo reshape_kind() {
  return {.kind = OpKind::reshape, .name = "reshape", .min_inputs = 1, .max_inputs = 1, .infer_shapes = reshape_shapes,
          .work = reshape_work, .sbp_rules = reshape_sbp, .saved = reshape_saved};
}

}  // namespace autoddl::costmodel::ops
