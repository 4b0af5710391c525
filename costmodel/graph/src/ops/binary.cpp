// Elementwise binary ops (add, mul) with NumPy broadcasting: shapes are aligned at the trailing
// axis, and a missing or size-1 axis broadcasts (the residual adds of transformers, GPT's
// position embedding (seq, h) added to (batch, seq, h)). 1 FLOP per output element forward.
// Backward: add passes dy through (a broadcast input reduces it: 1 FLOP per output element);
// mul multiplies dy by the other operand (1 FLOP per output element, plus the reduction).
#include <algorithm>

#include "kinds.hpp"

namespace autoddl::costmodel::ops {

std::vector<Shape> binary_shapes(const Graph& g, const Op& op) {
  const Shape& a = input(g, op, 0).shape;
  const Shape& b = input(g, op, 1).shape;
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // axis counted from the end
    int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1) {
      fail_input(g, op, 1,
                 "has shape " + shape_str(b) + ", which does not broadcast with " + shape_str(a));
    }
    out[rank - 1 - i] = std::max(da, db);
  }
  return {out};
}

OpWork binary_work(const Graph& g, const Op& op) {
  const Tensor& y = output(g, op, 0);
  double n = elements_of(y);
  OpWork w;
  w.fwd_flops = n;
  w.fwd_bytes = bytes_of(input(g, op, 0)) + bytes_of(input(g, op, 1)) + bytes_of(y);
  for (int i = 0; i < 2; ++i) {
    if (!needs_grad(g, op, i)) continue;
    const Tensor& x = input(g, op, i);
    bool broadcast = x.elements() != y.elements();
    if (op.attrs.binary == BinaryFn::add) {
      w.bwd_flops += broadcast ? n : 0;
      w.bwd_bytes += bytes_of(y) + bytes_of(x);
    } else {
      w.bwd_flops += n + (broadcast ? n : 0);
      w.bwd_bytes += bytes_of(y) + bytes_of(input(g, op, 1 - i)) + bytes_of(x);
    }
  }
  return w;
}

// add passes dY through; mul needs each operand for the other's gradient.
SavedForBackward binary_saved(const Graph& g, const Op& op) {
  SavedForBackward s;
  if (op.attrs.binary == BinaryFn::mul) {
    if (needs_grad(g, op, 1)) s.inputs |= 1u;
    if (needs_grad(g, op, 0)) s.inputs |= 2u;
  }
  return s;
}

}  // namespace autoddl::costmodel::ops
