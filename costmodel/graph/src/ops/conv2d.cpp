// Conv2d (cuDNN's NCHW forward convolution, no groups or dilation): x(N, C, H, W) * w(K, C, R, S)
// -> y(N, K, H', W') with H' = (H + 2·pad − R) / stride + 1. The kernel size comes from the
// weight; attrs give stride and pad. FLOPs 2·N·K·C·R·S·H'·W' forward (VGG16: 15.5 G MACs per
// 224² image); backward data- and weight-gradient convolutions cost the same each.
#include "kinds.hpp"

namespace autoddl::costmodel::ops {

namespace {
int64_t out_extent(int64_t in, int64_t kernel, int stride, int pad) {
  return (in + 2 * pad - kernel) / stride + 1;
}
}  // namespace

std::vector<Shape> conv2d_shapes(const Graph& g, const Op& op) {
  const Shape& x = input(g, op, 0).shape;
  const Shape& w = input(g, op, 1).shape;
  if (x.size() != 4)
    fail_input(g, op, 0, "has shape " + shape_str(x) + " but must be (N, C, H, W)");
  if (w.size() != 4)
    fail_input(g, op, 1, "has shape " + shape_str(w) + " but must be (K, C, R, S)");
  if (op.attrs.stride < 1 || op.attrs.pad < 0) {
    fail(g, op,
         "stride must be >= 1 and pad >= 0 (stride " + std::to_string(op.attrs.stride) + ", pad " +
             std::to_string(op.attrs.pad) + ")");
  }
  if (w[1] != x[1]) {
    fail_input(g, op, 1,
               "has shape " + shape_str(w) + ": its " + std::to_string(w[1]) +
                   " input channels do not match x's " + std::to_string(x[1]) + " (x is " +
                   shape_str(x) + ")");
  }
  int64_t h = out_extent(x[2], w[2], op.attrs.stride, op.attrs.pad);
  int64_t wd = out_extent(x[3], w[3], op.attrs.stride, op.attrs.pad);
  if (x[2] + 2 * op.attrs.pad < w[2] || x[3] + 2 * op.attrs.pad < w[3]) {
    fail_input(g, op, 1,
               "kernel " + std::to_string(w[2]) + "x" + std::to_string(w[3]) +
                   " is larger than the padded input " + shape_str(x));
  }
  return {{x[0], w[0], h, wd}};
}

OpWork conv2d_work(const Graph& g, const Op& op) {
  const Shape& w = input(g, op, 1).shape;
  const Shape& y = output(g, op, 0).shape;
  double flops = 2.0 * y[0] * w[0] * w[1] * w[2] * w[3] * y[2] * y[3];
  double xb = bytes_of(input(g, op, 0)), wb = bytes_of(input(g, op, 1));
  double yb = bytes_of(output(g, op, 0));
  OpWork work;
  work.fwd_flops = flops;
  work.fwd_bytes = xb + wb + yb;
  if (needs_grad(g, op, 0)) {  // dx = dy ⋆ w (transposed convolution)
    work.bwd_flops += flops;
    work.bwd_bytes += yb + wb + xb;
  }
  if (needs_grad(g, op, 1)) {  // dw = x ⋆ dy
    work.bwd_flops += flops;
    work.bwd_bytes += xb + yb + wb;
  }
  return work;
}

// The weight gradient correlates the input with dY: the input is kept.
SavedForBackward conv2d_saved(const Graph& g, const Op& op) {
  SavedForBackward s;
  if (needs_grad(g, op, 1)) s.inputs |= 1u;
  return s;
}

// SBP rule (sbp-and-search.md §2.2; the all-B signature is added for every op by
// signatures_1d()).
// x(N, C, H, W) * w(K, C, R, S) -> y(N, K, H', W').
void conv2d_sbp(const Graph&, const Op&, std::vector<Signature1D>& out) {
  using namespace sbp_rule;
  out.push_back(sig({S(0), B}, {S(0)}));  // batch (data parallel; OneFlow's only one)
  out.push_back(sig({B, S(0)}, {S(1)}));  // output channels
  out.push_back(sig({S(1), S(1)}, {P}));  // input channels: partial sums
  out.push_back(sig({P, B}, {P}));        // linear in x
}

// The kind's row of the op table (op_registry.hpp).
OpKindInfo conv2d_kind() {
  return {.kind = OpKind::conv2d, .name = "conv2d", .min_inputs = 2, .max_inputs = 2, .infer_shapes = conv2d_shapes,
          .work = conv2d_work, .sbp_rules = conv2d_sbp, .saved = conv2d_saved};
}

}  // namespace autoddl::costmodel::ops
