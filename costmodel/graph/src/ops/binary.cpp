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

namespace {
// silu(gate) ⊙ up is one SwiGLU kernel in Megatron-LM (bias_swiglu_impl, TE's swiglu), and
// gelu(gate) ⊙ up one GeGLU kernel (bias_geglu_impl, TE's geglu; Grok-1's experts): backward
// recomputes the activation from the gate, which silu and gelu keep, so the product keeps no
// copy of it.
bool fused_glu_operand(const Graph& g, const Op& op, int i) {
  const int producer = input(g, op, i).producer;
  if (producer < 0 || g.ops[producer].kind != OpKind::unary) return false;
  const UnaryFn fn = g.ops[producer].attrs.unary;
  return fn == UnaryFn::silu || fn == UnaryFn::gelu;
}
}  // namespace

// add passes dY through; mul needs each operand for the other's gradient.
SavedForBackward binary_saved(const Graph& g, const Op& op) {
  SavedForBackward s;
  if (op.attrs.binary == BinaryFn::mul) {
    if (needs_grad(g, op, 1) && !fused_glu_operand(g, op, 0)) s.inputs |= 1u;
    if (needs_grad(g, op, 0) && !fused_glu_operand(g, op, 1)) s.inputs |= 2u;
  }
  return s;
}

// SBP rule (sbp-and-search.md §2.2; the all-B signature is added for every op by
// signatures_1d()).
// Elementwise with broadcasting: trailing axes align; a size-1 or missing axis is broadcast.
void binary_sbp(const Graph& g, const Op& op, std::vector<Signature1D>& out) {
  using namespace sbp_rule;
  const Shape& a = shape_in(g, op, 0);
  const Shape& b = shape_in(g, op, 1);
  const Shape& y = shape_out(g, op, 0);
  const int r = static_cast<int>(y.size());
  auto side = [&](const Shape& x, int i) {
    int j = i - (r - static_cast<int>(x.size()));
    if (j < 0 || x[j] == 1) return B;
    return S(j);
  };
  for (int i = 0; i < r; ++i) {
    if (y[i] == 1) continue;
    Sbp sa = side(a, i), sb = side(b, i);
    out.push_back(sig({sa, sb}, {S(i)}));
  }
  if (op.attrs.binary == BinaryFn::add) {
    out.push_back(sig({P, P}, {P}));
  } else {
    out.push_back(sig({P, B}, {P}));
    out.push_back(sig({B, P}, {P}));
  }
}

// The kind's row of the op table (op_registry.hpp).
OpKindInfo binary_kind() {
  return {.kind = OpKind::binary, .name = "binary", .min_inputs = 2, .max_inputs = 2, .infer_shapes = binary_shapes,
          .work = binary_work, .sbp_rules = binary_sbp, .saved = binary_saved};
}

}  // namespace autoddl::costmodel::ops
