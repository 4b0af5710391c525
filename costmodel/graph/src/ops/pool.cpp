// Pool: max or average pooling of x(N, C, H, W) over kernel_h × kernel_w windows with stride
// and pad (PyTorch's floor rule, H' = (H + 2·pad − kh) / stride + 1), and global average
// pooling to (N, C, 1, 1) as in ResNet's head. Work: one FLOP per window element per output
// (compare or add) forward, the same to route/spread the gradient backward.
#include "kinds.hpp"

namespace autoddl::costmodel::ops {

std::vector<Shape> pool_shapes(const Graph& g, const Op& op) {
  const Shape& x = input(g, op, 0).shape;
  if (x.size() != 4)
    fail_input(g, op, 0, "has shape " + shape_str(x) + " but must be (N, C, H, W)");
  if (op.attrs.pool == PoolFn::global_avg) return {{x[0], x[1], 1, 1}};
  const OpAttrs& a = op.attrs;
  if (a.kernel_h < 1 || a.kernel_w < 1 || a.stride < 1 || a.pad < 0) {
    fail(g, op, "kernel and stride must be >= 1 and pad >= 0");
  }
  if (2 * a.pad > a.kernel_h || 2 * a.pad > a.kernel_w) {
    fail(g, op, "pad " + std::to_string(a.pad) + " must be at most half the kernel");
  }
  if (x[2] + 2 * a.pad < a.kernel_h || x[3] + 2 * a.pad < a.kernel_w) {
    fail_input(g, op, 0,
               "has shape " + shape_str(x) + ", smaller than the " + std::to_string(a.kernel_h) +
                   "x" + std::to_string(a.kernel_w) + " pooling window");
  }
  return {{x[0], x[1], (x[2] + 2 * a.pad - a.kernel_h) / a.stride + 1,
           (x[3] + 2 * a.pad - a.kernel_w) / a.stride + 1}};
}

OpWork pool_work(const Graph& g, const Op& op) {
  const Tensor& x = input(g, op, 0);
  const Tensor& y = output(g, op, 0);
  double window = op.attrs.pool == PoolFn::global_avg
                      ? static_cast<double>(x.shape[2] * x.shape[3])
                      : static_cast<double>(op.attrs.kernel_h) * op.attrs.kernel_w;
  OpWork w;
  w.fwd_flops = window * elements_of(y);
  w.fwd_bytes = bytes_of(x) + bytes_of(y);
  if (needs_grad(g, op, 0)) {
    w.bwd_flops = window * elements_of(y);
    // max pooling re-reads x to find each window's maximum; average pooling needs only dy.
    w.bwd_bytes = bytes_of(y) + bytes_of(x) + (op.attrs.pool == PoolFn::max ? bytes_of(x) : 0);
  }
  return w;
}

// Max pooling routes dY to the arg-max, read from its kept input; average pooling keeps nothing.
SavedForBackward pool_saved(const Graph&, const Op& op) {
  SavedForBackward s;
  if (op.attrs.pool == PoolFn::max) s.inputs = 1u;
  return s;
}

// SBP rule (sbp-and-search.md §2.2; the all-B signature is added for every op by
// signatures_1d()).
void pool_sbp(const Graph&, const Op& op, std::vector<Signature1D>& out) {
  using namespace sbp_rule;
  out.push_back(sig({S(0)}, {S(0)}));
  out.push_back(sig({S(1)}, {S(1)}));
  if (op.attrs.pool != PoolFn::max) out.push_back(sig({P}, {P}));  // averaging is linear
}

// The kind's row of the op table (op_registry.hpp).
OpKindInfo pool_kind() {
  return {.kind = OpKind::pool, .name = "pool", .min_inputs = 1, .max_inputs = 1, .infer_shapes = pool_shapes,
          .work = pool_work, .sbp_rules = pool_sbp, .saved = pool_saved};
}

}  // namespace autoddl::costmodel::ops
