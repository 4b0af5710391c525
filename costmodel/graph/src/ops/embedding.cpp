// Embedding (gather): inputs table(vocab, h) and integer indices(...) -> (..., h). Forward is
// a pure gather (0 FLOPs; reads the chosen rows and the indices, writes the output). Backward
// scatter-adds dy into a dense table gradient as PyTorch's dense embedding does: 1 FLOP per
// output element, and the whole (vocab, h) gradient is written.
#include "kinds.hpp"

namespace autoddl::costmodel::ops {

std::vector<Shape> embedding_shapes(const Graph& g, const Op& op) {
  const Tensor& table = input(g, op, 0);
  if (table.shape.size() != 2) {
    fail_input(g, op, 0,
               "has shape " + shape_str(table.shape) + " but the table must be (vocab, h)");
  }
  if (!is_float(table.dtype)) fail_input(g, op, 0, "the table must be floating-point");
  require_integer(g, op, 1, "indices");
  Shape out = input(g, op, 1).shape;
  out.push_back(table.shape[1]);
  return {out};
}

OpWork embedding_work(const Graph& g, const Op& op) {
  const Tensor& table = input(g, op, 0);
  const Tensor& idx = input(g, op, 1);
  const Tensor& y = output(g, op, 0);
  OpWork w;
  w.fwd_bytes = 2 * bytes_of(y) + bytes_of(idx);
  if (needs_grad(g, op, 0)) {
    w.bwd_flops = elements_of(y);
    w.bwd_bytes = bytes_of(y) + bytes_of(idx) + bytes_of(table);
  }
  return w;
}

// The table gradient scatters dY by the indices, which are inputs (data), not activations.
SavedForBackward embedding_saved(const Graph&, const Op&) { return {}; }

}  // namespace autoddl::costmodel::ops
