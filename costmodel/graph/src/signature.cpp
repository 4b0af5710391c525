// nd signatures from 1-D rules, and backward SBPs from forward ones (see signature.hpp).
#include "autoddl/costmodel/signature.hpp"

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/op_registry.hpp"

namespace autoddl::costmodel {

namespace {

bool same_1d(const Signature1D& a, const Signature1D& b, int n_in, int n_out) {
  for (int i = 0; i < n_in; ++i) {
    if (!(a.in[i] == b.in[i])) return false;
  }
  for (int o = 0; o < n_out; ++o) {
    if (!(a.out[o] == b.out[o])) return false;
  }
  return true;
}

}  // namespace

std::vector<Signature1D> signatures_1d(const Graph& graph, const Op& op) {
  const int n_in = static_cast<int>(op.inputs.size());
  const int n_out = static_cast<int>(op.outputs.size());
  AUTODDL_CHECK(n_in <= kMaxOpInputs && n_out <= kMaxOpOutputs) << "op " << op.name << " has too many operands";
  std::vector<Signature1D> raw;
  if (auto rule = op_kind_info(op.kind).sbp_rules) rule(graph, op, raw);
  const Signature1D all_b{};
  std::vector<Signature1D> out;
  for (const Signature1D& s : raw) {
    bool dup = same_1d(s, all_b, n_in, n_out);
    for (const Signature1D& t : out) dup = dup || same_1d(s, t, n_in, n_out);
    if (!dup) out.push_back(s);
  }
  out.push_back(all_b);  // every op can run replicated; kept last so callers can find it
  return out;
}

uint8_t batch_free_outputs(const Graph& graph, const Op& op) {
  uint8_t mask = 0;
  for (size_t o = 0; o < op.outputs.size(); ++o) {
    if (!graph.tensors[op.outputs[o]].batched) mask = static_cast<uint8_t>(mask | (1u << o));
  }
  return mask;
}

int sequence_split_ranks(const Op& op, const OpSignature& sig, const int* mesh_shape) {
  if (op.kind != OpKind::attention) return 1;
  int ranks = 1;
  for (int d = 0; d < sig.in[0].ndims; ++d) {
    if (sig.in[0].dims[d] == Sbp::split(2)) ranks *= mesh_shape[d];
  }
  return ranks;
}

void derive_backward(OpSignature& sig, const int* mesh_shape, uint8_t batch_free_outputs) {
  const uint8_t all_outputs = static_cast<uint8_t>((1u << sig.n_out) - 1);
  const bool outputs_batch_free = sig.n_out > 0 && (batch_free_outputs & all_outputs) == all_outputs;
  const int nd = sig.n_in > 0 ? sig.in[0].ndims : sig.out[0].ndims;
  sig.compute_split = 1;
  for (int i = 0; i < sig.n_in; ++i) sig.in_grad[i].ndims = static_cast<uint8_t>(nd);
  for (int o = 0; o < sig.n_out; ++o) sig.out_grad[o].ndims = static_cast<uint8_t>(nd);
  for (int d = 0; d < nd; ++d) {
    bool any_split = false, distributed = false;
    for (int i = 0; i < sig.n_in; ++i) {
      any_split |= sig.in[i].dims[d].is_split();
      distributed |= !sig.in[i].dims[d].is_broadcast();
    }
    for (int o = 0; o < sig.n_out; ++o) {
      any_split |= sig.out[o].dims[d].is_split();
      distributed |= !sig.out[o].dims[d].is_broadcast();
    }
    if (any_split) sig.compute_split *= mesh_shape[d];
    // Replicated here with batch-free outputs: the gradient stays a partial sum (see header).
    const bool pass_partial = !distributed && outputs_batch_free && mesh_shape[d] > 1;
    for (int i = 0; i < sig.n_in; ++i) {
      Sbp s = sig.in[i].dims[d];
      Sbp g = s.is_split() ? s : s.is_partial() ? Sbp::broadcast()
                                                : (distributed || pass_partial ? Sbp::partial() : Sbp::broadcast());
      sig.in_grad[i].dims[d] = g;
    }
    for (int o = 0; o < sig.n_out; ++o) {
      Sbp s = sig.out[o].dims[d];
      sig.out_grad[o].dims[d] = s.is_split() ? s : pass_partial ? Sbp::partial() : Sbp::broadcast();
    }
  }
}

std::vector<OpSignature> nd_signatures(const Graph& graph, const Op& op, const int* mesh_shape,
                                       int ndims, const std::vector<Shape>& in_shapes,
                                       const std::vector<Shape>& out_shapes) {
  const std::vector<Signature1D> one = signatures_1d(graph, op);
  const int n_in = static_cast<int>(op.inputs.size());
  const int n_out = static_cast<int>(op.outputs.size());
  std::vector<OpSignature> out;
  std::array<int, kMaxMeshDims> pick{};
  const int count = static_cast<int>(one.size());
  const uint8_t free_outputs = batch_free_outputs(graph, op);
  int total = 1;
  for (int d = 0; d < ndims; ++d) total *= count;
  for (int k = 0; k < total; ++k) {
    int rest = k;
    for (int d = ndims - 1; d >= 0; --d) {
      pick[d] = rest % count;
      rest /= count;
    }
    OpSignature sig;
    sig.n_in = n_in;
    sig.n_out = n_out;
    for (int i = 0; i < n_in; ++i) sig.in[i].ndims = static_cast<uint8_t>(ndims);
    for (int o = 0; o < n_out; ++o) sig.out[o].ndims = static_cast<uint8_t>(ndims);
    for (int d = 0; d < ndims; ++d) {
      for (int i = 0; i < n_in; ++i) sig.in[i].dims[d] = one[pick[d]].in[i];
      for (int o = 0; o < n_out; ++o) sig.out[o].dims[d] = one[pick[d]].out[o];
    }
    bool ok = true;
    for (int i = 0; i < n_in && ok; ++i) ok = divides(sig.in[i], mesh_shape, in_shapes[i]);
    for (int o = 0; o < n_out && ok; ++o) ok = divides(sig.out[o], mesh_shape, out_shapes[o]);
    if (!ok) continue;
    derive_backward(sig, mesh_shape, free_outputs);
    out.push_back(sig);
  }
  return out;
}

}  // namespace autoddl::costmodel
