// CrossEntropy loss: logits(..., classes) and integer labels(...) -> scalar mean loss (shape []).
// With classes = 1 the single logit is a binary (sigmoid) cross-entropy, as NCF's NeuMF uses.
// FLOPs per logit: 5 forward (log-softmax and the pick), 2 backward (softmax − one-hot, scaled).
#include "kinds.hpp"

namespace autoddl::costmodel::ops {

namespace {
constexpr double kFwdFlopsPerLogit = 5;
constexpr double kBwdFlopsPerLogit = 2;
}  // namespace

std::vector<Shape> cross_entropy_shapes(const Graph& g, const Op& op) {
  const Tensor& logits = input(g, op, 0);
  const Tensor& labels = input(g, op, 1);
  require_rank(g, op, 0, 1, "(..., classes)");
  if (!is_float(logits.dtype)) fail_input(g, op, 0, "logits must be floating-point");
  require_integer(g, op, 1, "labels");
  Shape expected(logits.shape.begin(), logits.shape.end() - 1);
  if (labels.shape != expected) {
    fail_input(g, op, 1,
               "has shape " + shape_str(labels.shape) + " but labels must be " +
                   shape_str(expected) + " (the logits " + shape_str(logits.shape) +
                   " without the class axis)");
  }
  return {Shape{}};
}

OpWork cross_entropy_work(const Graph& g, const Op& op) {
  const Tensor& logits = input(g, op, 0);
  const Tensor& labels = input(g, op, 1);
  OpWork w;
  w.fwd_flops = kFwdFlopsPerLogit * elements_of(logits);
  w.fwd_bytes = bytes_of(logits) + bytes_of(labels) + bytes_of(output(g, op, 0));
  if (needs_grad(g, op, 0)) {
    w.bwd_flops = kBwdFlopsPerLogit * elements_of(logits);
    w.bwd_bytes = 2 * bytes_of(logits) + bytes_of(labels);  // reads logits, writes dlogits
  }
  return w;
}

// The softmax of the logits is kept for dlogits; Megatron-LM's vocab-parallel cross-entropy
// holds it in fp32 (Korthikanti et al. 2022, §4.3: 4·s·b·v/t bytes).
SavedForBackward cross_entropy_saved(const Graph&, const Op&) {
  SavedForBackward s;
  s.inputs = 1u;
  s.inputs_in_fp32 = true;
  return s;
}

// SBP rule (sbp-and-search.md §2.2; the all-B signature is added for every op by
// signatures_1d()).
// logits(..., C), labels(...) -> scalar loss (a sum of per-sample terms, so splits give P).
void cross_entropy_sbp(const Graph& g, const Op& op, std::vector<Signature1D>& out) {
  using namespace sbp_rule;
  const int r = rank_in(g, op, 0);
  for (int i = 0; i + 1 < r; ++i) out.push_back(sig({S(i), S(i)}, {P}));
  // Vocab-parallel (Megatron): each device holds a slice of the classes; the max and the
  // sum of exponentials are all-reduced over (batch) scalars, which we neglect.
  out.push_back(sig({S(r - 1), B}, {P}));
}

// The kind's row of the op table (op_registry.hpp).
OpKindInfo cross_entropy_kind() {
  return {.kind = OpKind::cross_entropy, .name = "cross_entropy", .min_inputs = 2, .max_inputs = 2, .infer_shapes = cross_entropy_shapes,
          .work = cross_entropy_work, .sbp_rules = cross_entropy_sbp, .saved = cross_entropy_saved,
          .memory_kernel = MemoryKernel::loss};
}

}  // namespace autoddl::costmodel::ops
