// LayerNorm (Ba et al. 2016): normalizes x over its trailing axes starting at `axis` (default
// last), then scales by gamma and shifts by beta, both shaped like those trailing axes.
// FLOPs per element: 8 forward (mean, centre, square-sum, normalize, scale, shift), 12 backward
// (dx plus the dgamma/dbeta reductions). Without beta it is RMSNorm (Zhang & Sennrich 2019;
// Llama): no mean, no centring, no shift: 4 forward (square-sum, normalize, scale), 7 backward.
// Estimates, documented rather than measured.
#include "kinds.hpp"

namespace autoddl::costmodel::ops {

namespace {
constexpr double kFwdFlopsPerElement = 8, kRmsFwdFlopsPerElement = 4;
constexpr double kBwdFlopsPerElement = 12, kRmsBwdFlopsPerElement = 7;
bool rms(const Op& op) { return op.inputs.size() == 2; }
}  // namespace

std::vector<Shape> layer_norm_shapes(const Graph& g, const Op& op) {
  const Tensor& x = input(g, op, 0);
  require_rank(g, op, 0, 1, "at least 1-D");
  if (!is_float(x.dtype)) fail_input(g, op, 0, "must be a floating-point tensor");
  int axis = normalize_axis(g, op, op.attrs.axis, x.shape.size(), "axis");
  Shape normalized(x.shape.begin() + axis, x.shape.end());
  for (int i = 1; i < static_cast<int>(op.inputs.size()); ++i) {
    if (input(g, op, i).shape != normalized) {
      fail_input(g, op, i,
                 "has shape " + shape_str(input(g, op, i).shape) + " but " +
                     (i == 1 ? "gamma" : "beta") + " must be " + shape_str(normalized) +
                     " (the axes from " + std::to_string(axis) + " of " + shape_str(x.shape) + ")");
    }
  }
  return {x.shape};
}

OpWork layer_norm_work(const Graph& g, const Op& op) {
  const Tensor& x = input(g, op, 0);
  const Tensor& y = output(g, op, 0);
  double params = 0;
  for (size_t i = 1; i < op.inputs.size(); ++i) params += bytes_of(input(g, op, static_cast<int>(i)));
  OpWork w;
  w.fwd_flops = (rms(op) ? kRmsFwdFlopsPerElement : kFwdFlopsPerElement) * elements_of(y);
  w.fwd_bytes = bytes_of(x) + params + bytes_of(y);
  bool grad = false;
  for (size_t i = 0; i < op.inputs.size(); ++i) grad = grad || needs_grad(g, op, static_cast<int>(i));
  if (grad) {
    w.bwd_flops = (rms(op) ? kRmsBwdFlopsPerElement : kBwdFlopsPerElement) * elements_of(y);
    // reads dy, x, gamma; writes dx, dgamma, dbeta
    w.bwd_bytes = bytes_of(y) + 2 * bytes_of(x) + 1.5 * params;
  }
  return w;
}

// The input is kept (its per-row mean and variance are negligible beside it).
SavedForBackward layer_norm_saved(const Graph&, const Op&) {
  SavedForBackward s;
  s.inputs = 1u;
  return s;
}

// SBP rule (sbp-and-search.md §2.2; the all-B signature is added for every op by
// signatures_1d()).
// Normalizes the axes from `axis` on; gamma and beta (none for RMSNorm) cover those axes.
void layer_norm_sbp(const Graph& g, const Op& op, std::vector<Signature1D>& out) {
  using namespace sbp_rule;
  const int r = rank_in(g, op, 0);
  const int ax = norm_axis(op.attrs.axis, r);
  const bool rms = op.inputs.size() == 2;
  for (int i = 0; i < ax; ++i) out.push_back(rms ? sig({S(i), B}, {S(i)}) : sig({S(i), B, B}, {S(i)}));
}

// The kind's row of the op table (op_registry.hpp).
OpKindInfo layer_norm_kind() {
  return {.kind = OpKind::layer_norm, .name = "layer_norm", .min_inputs = 2, .max_inputs = 3, .infer_shapes = layer_norm_shapes,
          .work = layer_norm_work, .sbp_rules = layer_norm_sbp, .saved = layer_norm_saved,
          .memory_kernel = MemoryKernel::norm};
}

}  // namespace autoddl::costmodel::ops
