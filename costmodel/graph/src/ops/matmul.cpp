// MatMul: A(..., m, k) · B(k, n) -> (..., m, n), or a batched B(..., k, n) with the same batch
// dims as A (attention's Q·Kᵀ and P·V). transpose_b stores B as (n, k) / (..., n, k), which is
// how tied LM heads read the embedding table. Covers Linear (2-D weight) and BatchMatMul.
// FLOPs: 2·batch·m·k·n forward; backward dA = dC·Bᵀ and dB = Aᵀ·dC cost the same each.
#include "kinds.hpp"

namespace autoddl::costmodel::ops {

namespace {
struct Dims {
  int64_t batch, m, k, n;
};

Dims dims(const Graph& g, const Op& op) {
  const Shape& a = input(g, op, 0).shape;
  const Shape& b = input(g, op, 1).shape;
  size_t rb = b.size();
  bool tb = op.attrs.transpose_b;
  return {product(a, 0, a.size() - 2), a[a.size() - 2], a.back(), tb ? b[rb - 2] : b[rb - 1]};
}
}  // namespace

std::vector<Shape> matmul_shapes(const Graph& g, const Op& op) {
  require_rank(g, op, 0, 2, "(..., m, k)");
  require_rank(g, op, 1, 2,
               op.attrs.transpose_b ? "(n, k) or (..., n, k)" : "(k, n) or (..., k, n)");
  const Shape& a = input(g, op, 0).shape;
  const Shape& b = input(g, op, 1).shape;
  if (b.size() != 2 && b.size() != a.size()) {
    fail_input(g, op, 1,
               "has shape " + shape_str(b) + ": B must be 2-D or have A's rank " +
                   std::to_string(a.size()) + " (A is " + shape_str(a) + ")");
  }
  if (b.size() == a.size()) {
    for (size_t i = 0; i + 2 < a.size(); ++i) {
      if (a[i] != b[i]) {
        fail_input(g, op, 1, "batch dims of " + shape_str(b) + " differ from A's " + shape_str(a));
      }
    }
  }
  size_t rb = b.size();
  int64_t bk = op.attrs.transpose_b ? b[rb - 1] : b[rb - 2];
  int64_t n = op.attrs.transpose_b ? b[rb - 2] : b[rb - 1];
  if (bk != a.back()) {
    fail_input(g, op, 1,
               "has shape " + shape_str(b) + (op.attrs.transpose_b ? " (transposed)" : "") +
                   ": inner dim " + std::to_string(bk) + " does not match A's k = " +
                   std::to_string(a.back()) + " (A is " + shape_str(a) + ")");
  }
  Shape out(a.begin(), a.end() - 1);
  out.push_back(n);
  return {out};
}

OpWork matmul_work(const Graph& g, const Op& op) {
  Dims d = dims(g, op);
  double flops = 2.0 * d.batch * d.m * d.k * d.n;
  double a = bytes_of(input(g, op, 0)), b = bytes_of(input(g, op, 1));
  double c = bytes_of(output(g, op, 0));
  OpWork w;
  w.fwd_flops = flops;
  w.fwd_bytes = a + b + c;
  if (needs_grad(g, op, 0)) {  // dA = dC · Bᵀ
    w.bwd_flops += flops;
    w.bwd_bytes += c + b + a;
  }
  if (needs_grad(g, op, 1)) {  // dB = Aᵀ · dC
    w.bwd_flops += flops;
    w.bwd_bytes += a + c + b;
  }
  return w;
}

// dA = dY·Bᵀ needs B, dB = Aᵀ·dY needs A: an operand is kept when the other needs a gradient.
SavedForBackward matmul_saved(const Graph& g, const Op& op) {
  SavedForBackward s;
  if (needs_grad(g, op, 1)) s.inputs |= 1u;
  if (needs_grad(g, op, 0)) s.inputs |= 2u;
  return s;
}

// The GEMM on local shapes: a 2-D B folds A's batch dims into M; a batched B keeps them.
GemmDims matmul_gemm_dims(const Shape& a, const Shape& b, const OpAttrs& attrs) {
  const size_t rb = b.size();
  GemmDims d;
  d.k = a.back();
  d.n = attrs.transpose_b ? b[rb - 2] : b[rb - 1];
  d.m = product(a, 0, a.size() - 1);
  if (rb > 2) d.batch = product(a, 0, a.size() - 2), d.m = a[a.size() - 2];
  return d;
}

// SBP rule (sbp-and-search.md §2.2; the all-B signature is added for every op by
// signatures_1d()).
// A(..., m, k) · B(k, n) [or B(..., k, n); transpose_b stores (n, k)] -> C(..., m, n).
void matmul_sbp(const Graph& g, const Op& op, std::vector<Signature1D>& out) {
  using namespace sbp_rule;
  const int ra = rank_in(g, op, 0), rb = rank_in(g, op, 1);
  const bool tb = op.attrs.transpose_b;
  const int k_b = tb ? rb - 1 : rb - 2;
  const int n_b = tb ? rb - 2 : rb - 1;
  for (int i = 0; i + 2 < ra; ++i) {  // batch axes (data parallel, attention heads)
    out.push_back(sig({S(i), rb == ra ? S(i) : B}, {S(i)}));
  }
  out.push_back(sig({S(ra - 2), B}, {S(ra - 2)}));  // rows of A
  out.push_back(sig({B, S(n_b)}, {S(ra - 1)}));     // columns of B (column-parallel)
  out.push_back(sig({S(ra - 1), S(k_b)}, {P}));     // the reduction dim (row-parallel)
  out.push_back(sig({P, B}, {P}));
  out.push_back(sig({B, P}, {P}));
}

// The kind's row of the op table (op_registry.hpp).
OpKindInfo matmul_kind() {
  return {.kind = OpKind::matmul, .name = "matmul", .min_inputs = 2, .max_inputs = 2, .infer_shapes = matmul_shapes,
          .work = matmul_work, .sbp_rules = matmul_sbp, .saved = matmul_saved, .gemm = true,
          .tp_weight = TpWeight::gemm, .gemm_dims = matmul_gemm_dims};
}

}  // namespace autoddl::costmodel::ops
