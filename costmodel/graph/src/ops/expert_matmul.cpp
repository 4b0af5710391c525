// The experts' grouped GEMM (Megatron-Core's GroupedMLP / TEGroupedLinear): x(C, E, k) ·
// W(E, k, n) -> (C, E, n), expert e multiplying its C token slots by its own weight. FLOPs
// 2·C·E·k·n (top_k experts per token: the active FLOPs); priced as E GEMMs of C x k x n on the
// local shapes, so few tokens per expert run at a small GEMM's efficiency.
// SBP: slots split with weights replicated (expert data parallelism), experts split with the
// weights (expert parallelism), and Megatron's column/row tensor-parallel splits (expert tensor
// parallelism).
#include "kinds.hpp"

namespace autoddl::costmodel::ops {

std::vector<Shape> expert_matmul_shapes(const Graph& g, const Op& op) {
  const Shape& x = input(g, op, 0).shape;
  const Shape& w = input(g, op, 1).shape;
  if (x.size() != 3) fail_input(g, op, 0, "has shape " + shape_str(x) + " but must be (slots, experts, k)");
  if (w.size() != 3 || w[0] != x[1] || w[1] != x[2]) {
    fail_input(g, op, 1, "has shape " + shape_str(w) + " but must be (experts, k, n) with experts = " +
                             std::to_string(x[1]) + ", k = " + std::to_string(x[2]));
  }
  return {{x[0], x[1], w[2]}};
}

OpWork expert_matmul_work(const Graph& g, const Op& op) {
  const Shape& x = input(g, op, 0).shape;
  const Shape& w = input(g, op, 1).shape;
  const double flops = 2.0 * static_cast<double>(x[0]) * x[1] * x[2] * w[2];
  const double a = bytes_of(input(g, op, 0)), b = bytes_of(input(g, op, 1)), c = bytes_of(output(g, op, 0));
  OpWork k;
  k.fwd_flops = flops;
  k.fwd_bytes = a + b + c;
  if (needs_grad(g, op, 0)) k.bwd_flops += flops, k.bwd_bytes += c + b + a;
  if (needs_grad(g, op, 1)) k.bwd_flops += flops, k.bwd_bytes += a + c + b;
  return k;
}

SavedForBackward expert_matmul_saved(const Graph& g, const Op& op) {
  SavedForBackward s;
  if (needs_grad(g, op, 1)) s.inputs |= 1u;
  if (needs_grad(g, op, 0)) s.inputs |= 2u;
  return s;
}

GemmDims expert_matmul_gemm_dims(const Shape& a, const Shape& b, const OpAttrs&) {
  GemmDims d;
  d.batch = a[1];
  d.m = a[0];
  d.k = a[2];
  d.n = b[2];
  return d;
}

// x(C, E, k) · W(E, k, n) -> (C, E, n)
void expert_matmul_sbp(const Graph&, const Op&, std::vector<Signature1D>& out) {
  using namespace sbp_rule;
  out.push_back(sig({S(0), B}, {S(0)}));     // token slots: expert data parallel
  out.push_back(sig({S(1), S(0)}, {S(1)}));  // experts: expert parallel
  out.push_back(sig({B, S(2)}, {S(2)}));     // column-parallel (expert tensor parallel)
  out.push_back(sig({S(2), S(1)}, {P}));     // row-parallel
  out.push_back(sig({P, B}, {P}));
  out.push_back(sig({B, P}, {P}));
}

OpKindInfo expert_matmul_kind() {
  return {.kind = OpKind::expert_matmul, .name = "expert_matmul", .min_inputs = 2, .max_inputs = 2,
          .infer_shapes = expert_matmul_shapes, .work = expert_matmul_work, .sbp_rules = expert_matmul_sbp,
          .saved = expert_matmul_saved, .gemm = true, .tp_weight = TpWeight::gemm,
          .gemm_dims = expert_matmul_gemm_dims};
}

}  // namespace autoddl::costmodel::ops
