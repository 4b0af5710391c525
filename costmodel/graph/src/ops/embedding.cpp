// Embedding (gather): inputs table(vocab, h) and integer indices(...) -> (..., h). Forward is
// a pure gather (0 FLOPs; reads the chosen rows and the indices, writes the output). Backward
// scatter-adds dy into a dense table gradient as PyTorch's dense embedding does: 1 FLOP per
// output element, and the whole (vocab, h) gradient is written.
#include "kinds.hpp"

namespace autoddl::costmodel::ops {

std::vector<Shape> embedding_shapes(const Graph& g, const Op& op) {
  const Tensor& table = input(g, op, 0);
  if (table.shape.size() != 2) {
    fail_input(g, op, 0,
               "has shape " + shape_str(table.shape) + " but the table must be (vocab, h)");
  }
  if (!is_float(table.dtype)) fail_input(g, op, 0, "the table must be floating-point");
  require_integer(g, op, 1, "indices");
  Shape out = input(g, op, 1).shape;
  out.push_back(table.shape[1]);
  return {out};
}

OpWork embedding_work(const Graph& g, const Op& op) {
  const Tensor& table = input(g, op, 0);
  const Tensor& idx = input(g, op, 1);
  const Tensor& y = output(g, op, 0);
  OpWork w;
  w.fwd_bytes = 2 * bytes_of(y) + bytes_of(idx);
  if (needs_grad(g, op, 0)) {
    w.bwd_flops = elements_of(y);
    w.bwd_bytes = bytes_of(y) + bytes_of(idx) + bytes_of(table);
  }
  return w;
}

// The table gradient scatters dY by the indices, which are inputs (data), not activations.
SavedForBackward embedding_saved(const Graph&, const Op&) { return {}; }

// SBP rule (sbp-and-search.md §2.2; the all-B signature is added for every op by
// signatures_1d()).
// table(V, h), indices(...) -> (..., h).
void embedding_sbp(const Graph& g, const Op& op, std::vector<Signature1D>& out) {
  using namespace sbp_rule;
  const int ri = rank_in(g, op, 1);
  for (int i = 0; i < ri; ++i) out.push_back(sig({B, S(i)}, {S(i)}));
  out.push_back(sig({S(0), B}, {P}));       // vocab-parallel: rows not held give zeros
  out.push_back(sig({S(1), B}, {S(ri)}));   // hidden split
}

// The kind's row of the op table (op_registry.hpp).
OpKindInfo embedding_kind() {
  return {.kind = OpKind::embedding, .name = "embedding", .min_inputs = 2, .max_inputs = 2,
          .infer_shapes = embedding_shapes, .work = embedding_work, .sbp_rules = embedding_sbp,
          .saved = embedding_saved, .tp_weight = TpWeight::vocab_rows};
}

}  // namespace autoddl::costmodel::ops
