// The 1-D SBP signatures of every op kind, side by side like OneFlow's table (sbp-and-search.md
// §2.2; one file rather than one per kind so the rules can be read and checked together). The
// all-B signature is added for every op by signatures_1d(). Additions beyond OneFlow, as
// DESIGN.md asks: conv2d's out-channel and in-channel splits, vocab-parallel embedding and
// cross-entropy, and reshape/transpose mapping splits across axes.
#include "sbp_rules.hpp"

#include <algorithm>

namespace autoddl::costmodel::sbp_rules {

namespace {

const Sbp B = Sbp::broadcast();
const Sbp P = Sbp::partial();
Sbp S(int a) { return Sbp::split(a); }

Signature1D sig(std::initializer_list<Sbp> in, std::initializer_list<Sbp> out) {
  Signature1D s;
  int i = 0;
  for (Sbp x : in) s.in[i++] = x;
  int o = 0;
  for (Sbp x : out) s.out[o++] = x;
  return s;
}

const Shape& shape_in(const Graph& g, const Op& op, int k) { return g.tensors[op.inputs[k]].shape; }
const Shape& shape_out(const Graph& g, const Op& op, int k) { return g.tensors[op.outputs[k]].shape; }
int rank_in(const Graph& g, const Op& op, int k) { return static_cast<int>(shape_in(g, op, k).size()); }

int norm_axis(int axis, int rank) { return axis < 0 ? axis + rank : axis; }

}  // namespace

// A(..., m, k) · B(k, n) [or B(..., k, n); transpose_b stores (n, k)] -> C(..., m, n).
void matmul(const Graph& g, const Op& op, std::vector<Signature1D>& out) {
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

// Fused attention over (batch, heads, seq, head_dim): batch or heads split (data or tensor
// parallel; Megatron splits heads), or all replicated. A split sequence would need the ring
// exchange of context parallelism, which this kernel does not do.
void attention(const Graph&, const Op&, std::vector<Signature1D>& out) {
  out.push_back(sig({S(0), S(0), S(0)}, {S(0)}));
  out.push_back(sig({S(1), S(1), S(1)}, {S(1)}));
}

// x(N, C, H, W) * w(K, C, R, S) -> y(N, K, H', W').
void conv2d(const Graph&, const Op&, std::vector<Signature1D>& out) {
  out.push_back(sig({S(0), B}, {S(0)}));  // batch (data parallel; OneFlow's only one)
  out.push_back(sig({B, S(0)}, {S(1)}));  // output channels
  out.push_back(sig({S(1), S(1)}, {P}));  // input channels: partial sums
  out.push_back(sig({P, B}, {P}));        // linear in x
}

void pool(const Graph&, const Op& op, std::vector<Signature1D>& out) {
  out.push_back(sig({S(0)}, {S(0)}));
  out.push_back(sig({S(1)}, {S(1)}));
  if (op.attrs.pool != PoolFn::max) out.push_back(sig({P}, {P}));  // averaging is linear
}

// y = x + b along `axis` of x.
void bias_add(const Graph& g, const Op& op, std::vector<Signature1D>& out) {
  const int r = rank_in(g, op, 0);
  const int ax = norm_axis(op.attrs.axis, r);
  for (int i = 0; i < r; ++i) {
    out.push_back(i == ax ? sig({S(i), S(0)}, {S(i)}) : sig({S(i), B}, {S(i)}));
  }
  out.push_back(sig({P, P}, {P}));  // the bias added once: B→P keeps it on one device
}

void unary(const Graph& g, const Op& op, std::vector<Signature1D>& out) {
  const int r = rank_in(g, op, 0);
  for (int i = 0; i < r; ++i) out.push_back(sig({S(i)}, {S(i)}));
  // relu, gelu, tanh, sigmoid are nonlinear; dropout draws one mask per element, which a
  // partial sum would apply to each device's part: no P→P for any unary.
}

// Elementwise with broadcasting: trailing axes align; a size-1 or missing axis is broadcast.
void binary(const Graph& g, const Op& op, std::vector<Signature1D>& out) {
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

void softmax(const Graph& g, const Op& op, std::vector<Signature1D>& out) {
  const int r = rank_in(g, op, 0);
  const int ax = norm_axis(op.attrs.axis, r);
  for (int i = 0; i < r; ++i) {
    if (i != ax) out.push_back(sig({S(i)}, {S(i)}));
  }
}

// Normalizes the axes from `axis` on; gamma and beta (none for RMSNorm) cover those axes.
void layer_norm(const Graph& g, const Op& op, std::vector<Signature1D>& out) {
  const int r = rank_in(g, op, 0);
  const int ax = norm_axis(op.attrs.axis, r);
  const bool rms = op.inputs.size() == 2;
  for (int i = 0; i < ax; ++i) out.push_back(rms ? sig({S(i), B}, {S(i)}) : sig({S(i), B, B}, {S(i)}));
}

// Per-channel statistics: channel split is exact; batch split uses local statistics (as
// PyTorch DDP without SyncBatchNorm does).
void batch_norm(const Graph&, const Op&, std::vector<Signature1D>& out) {
  out.push_back(sig({S(0), B, B}, {S(0)}));
  out.push_back(sig({S(1), S(0), S(0)}, {S(1)}));
}

// table(V, h), indices(...) -> (..., h).
void embedding(const Graph& g, const Op& op, std::vector<Signature1D>& out) {
  const int ri = rank_in(g, op, 1);
  for (int i = 0; i < ri; ++i) out.push_back(sig({B, S(i)}, {S(i)}));
  out.push_back(sig({S(0), B}, {P}));       // vocab-parallel: rows not held give zeros
  out.push_back(sig({S(1), B}, {S(ri)}));   // hidden split
}

// A split of input axis i maps to output axis j when both start at the same flat offset
// (equal products of the leading axes) and one extent divides the other, so the pieces are
// the same contiguous blocks; divisibility by the mesh size is checked on both shapes later.
void reshape(const Graph& g, const Op& op, std::vector<Signature1D>& out) {
  const Shape& x = shape_in(g, op, 0);
  const Shape& y = shape_out(g, op, 0);
  int64_t px = 1;
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t py = 1;
    for (size_t j = 0; j < y.size(); ++j) {
      if (py == px && x[i] > 1 && y[j] > 1 && (x[i] % y[j] == 0 || y[j] % x[i] == 0)) {
        out.push_back(sig({S(static_cast<int>(i))}, {S(static_cast<int>(j))}));
        break;
      }
      py *= y[j];
      if (py > px) break;
    }
    px *= x[i];
  }
  out.push_back(sig({P}, {P}));
}

void transpose(const Graph&, const Op& op, std::vector<Signature1D>& out) {
  for (size_t j = 0; j < op.attrs.perm.size(); ++j) {
    out.push_back(sig({S(op.attrs.perm[j])}, {S(static_cast<int>(j))}));
  }
  out.push_back(sig({P}, {P}));
}

void concat(const Graph& g, const Op& op, std::vector<Signature1D>& out) {
  const int r = rank_in(g, op, 0);
  const int ax = norm_axis(op.attrs.axis, r);
  const int n = static_cast<int>(op.inputs.size());
  for (int i = 0; i < r; ++i) {
    if (i == ax) continue;
    Signature1D s;
    for (int k = 0; k < n; ++k) s.in[k] = S(i);
    s.out[0] = S(i);
    out.push_back(s);
  }
  Signature1D p;
  for (int k = 0; k < n; ++k) p.in[k] = P;
  p.out[0] = P;
  out.push_back(p);
}

// logits(..., C), labels(...) -> scalar loss (a sum of per-sample terms, so splits give P).
void cross_entropy(const Graph& g, const Op& op, std::vector<Signature1D>& out) {
  const int r = rank_in(g, op, 0);
  for (int i = 0; i + 1 < r; ++i) out.push_back(sig({S(i), S(i)}, {P}));
  // Vocab-parallel (Megatron): each device holds a slice of the classes; the max and the
  // sum of exponentials are all-reduced over (batch) scalars, which we neglect.
  out.push_back(sig({S(r - 1), B}, {P}));
}

}  // namespace autoddl::costmodel::sbp_rules
