// BatchNorm in training mode (Ioffe & Szegedy 2015): statistics over every axis but 1 (the
// channels of NCHW, or the features of (N, C)); gamma and beta are (C). Running statistics are
// buffers, not parameters (torchvision's ResNet-50 counts 25.56 M parameters the same way).
// FLOPs per element as LayerNorm: 8 forward, 12 backward (estimates).
#include "kinds.hpp"

namespace autoddl::costmodel::ops {

namespace {
constexpr double kFwdFlopsPerElement = 8;
constexpr double kBwdFlopsPerElement = 12;
}  // namespace

std::vector<Shape> batch_norm_shapes(const Graph& g, const Op& op) {
  const Tensor& x = input(g, op, 0);
  require_rank(g, op, 0, 2, "(N, C, ...)");
  if (!is_float(x.dtype)) fail_input(g, op, 0, "must be a floating-point tensor");
  for (int i = 1; i <= 2; ++i) {
    if (input(g, op, i).shape != Shape{x.shape[1]}) {
      fail_input(g, op, i,
                 "has shape " + shape_str(input(g, op, i).shape) + " but " +
                     (i == 1 ? "gamma" : "beta") + " must be [" + std::to_string(x.shape[1]) +
                     "] (the channels of " + shape_str(x.shape) + ")");
    }
  }
  return {x.shape};
}

OpWork batch_norm_work(const Graph& g, const Op& op) {
  const Tensor& x = input(g, op, 0);
  const Tensor& y = output(g, op, 0);
  double params = bytes_of(input(g, op, 1)) + bytes_of(input(g, op, 2));
  OpWork w;
  w.fwd_flops = kFwdFlopsPerElement * elements_of(y);
  // statistics pass reads x, normalize pass reads x again and writes y
  w.fwd_bytes = 2 * bytes_of(x) + params + bytes_of(y);
  if (needs_grad(g, op, 0) || needs_grad(g, op, 1) || needs_grad(g, op, 2)) {
    w.bwd_flops = kBwdFlopsPerElement * elements_of(y);
    // reduction pass reads dy and x; dx pass reads them again and writes dx
    w.bwd_bytes = 2 * (bytes_of(y) + bytes_of(x)) + bytes_of(x) + 1.5 * params;
  }
  return w;
}

// The input is kept (its per-channel statistics are negligible beside it).
SavedForBackward batch_norm_saved(const Graph&, const Op&) {
  SavedForBackward s;
  s.inputs = 1u;
  return s;
}

// SBP rule (sbp-and-search.md §2.2; the all-B signature is added for every op by
// signatures_1d()).
// Per-channel statistics: channel split is exact; batch split uses local statistics (as
// PyTorch DDP without SyncBatchNorm does).
void batch_norm_sbp(const Graph&, const Op&, std::vector<Signature1D>& out) {
  using namespace sbp_rule;
  out.push_back(sig({S(0), B, B}, {S(0)}));
  out.push_back(sig({S(1), S(0), S(0)}, {S(1)}));
}

// The kind's row of the op table (op_registry.hpp).
OpKindInfo batch_norm_kind() {
  return {.kind = OpKind::batch_norm, .name = "batch_norm", .min_inputs = 3, .max_inputs = 3, .infer_shapes = batch_norm_shapes,
          .work = batch_norm_work, .sbp_rules = batch_norm_sbp, .saved = batch_norm_saved};
}

}  // namespace autoddl::costmodel::ops
