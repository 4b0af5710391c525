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

}  // namespace autoddl::costmodel::ops
