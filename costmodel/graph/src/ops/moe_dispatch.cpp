// MoE token dispatch (Megatron-Core's token permutation before the experts): x(b, s..., h) ->
// (C, E, h), each token copied into the slots of its top_k experts. C = b · slots, with
// slots = ⌈tokens per sample · top_k · capacity_factor / E⌉ per sample: capacity_factor 1 is
// the dropless, force-balanced routing published benchmarks run (every expert gets its mean
// share); above 1 it is the busiest expert's share under imbalance (or a capacity factor's
// padding), which every rank then waits for. The token-slot axis leads so that it carries the
// batch: micro-batching and data parallelism split it as they split tokens.
// SBP: a split of any token axis becomes a split of the slots (each rank fills its own slots of
// every expert); going from slots to experts (S(0) -> S(1)) is the all-to-all of expert
// parallelism, a boxing the cost model prices like any other.
#include <cmath>

#include "kinds.hpp"

namespace autoddl::costmodel::ops {

std::vector<Shape> moe_dispatch_shapes(const Graph& g, const Op& op) {
  require_rank(g, op, 0, 3, "(batch, tokens..., h)");
  const Shape& x = input(g, op, 0).shape;
  const OpAttrs& a = op.attrs;
  if (a.experts < 1) fail(g, op, "experts must be at least 1 (got " + std::to_string(a.experts) + ")");
  if (a.top_k < 1 || a.top_k > a.experts) {
    fail(g, op, "top_k must lie in [1, experts = " + std::to_string(a.experts) + "] (got " + std::to_string(a.top_k) + ")");
  }
  if (!(a.capacity_factor >= 1.0) || a.capacity_factor > 1024) {
    fail(g, op, "capacity_factor must lie in [1, 1024] (got " + std::to_string(a.capacity_factor) + ")");
  }
  const double tokens = static_cast<double>(product(x, 1, x.size() - 1));
  const auto slots = static_cast<int64_t>(std::ceil(tokens * a.top_k * a.capacity_factor / a.experts - 1e-9));
  return {{x[0] * slots, a.experts, x.back()}};
}

OpWork moe_dispatch_work(const Graph& g, const Op& op) {
  const Tensor& x = input(g, op, 0);
  const Tensor& y = output(g, op, 0);
  OpWork w;
  w.fwd_bytes = bytes_of(x) + bytes_of(y);  // a gather by the routing map
  if (needs_grad(g, op, 0)) {               // un-permute: each token sums its top_k copies
    w.bwd_flops = elements_of(y);
    w.bwd_bytes = bytes_of(y) + bytes_of(x);
  }
  return w;
}

// (b, s..., h) -> (C, E, h)
void moe_dispatch_sbp(const Graph& g, const Op& op, std::vector<Signature1D>& out) {
  using namespace sbp_rule;
  const int r = rank_in(g, op, 0);
  for (int i = 0; i + 1 < r; ++i) out.push_back(sig({S(i)}, {S(0)}));  // tokens -> slots
  out.push_back(sig({S(r - 1)}, {S(2)}));                              // hidden
  out.push_back(sig({P}, {P}));                                        // a copy is linear
}

OpKindInfo moe_dispatch_kind() {
  return {.kind = OpKind::moe_dispatch, .name = "moe_dispatch", .min_inputs = 1, .max_inputs = 1,
          .infer_shapes = moe_dispatch_shapes, .work = moe_dispatch_work, .sbp_rules = moe_dispatch_sbp,
          .moe = MoeBoundary::enters};
}

}  // namespace autoddl::costmodel::ops
