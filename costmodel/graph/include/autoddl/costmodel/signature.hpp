// SBP signatures of ops. A kind lists its legal 1-D signatures (inputs → outputs, OneFlow
// rules, DESIGN.md); the nd list is their product over mesh dims, filtered so every split axis
// divides. Backward follows forward: on each mesh dim an input's gradient is S(i) if the input
// is S(i), B if the input is P, and for a B input P when the op is distributed on that dim (some
// operand split or partial) else B; the op needs its output gradient as S→S, B→B, P→B.
// One exception: an op replicated on a dim (every operand B) whose outputs are all batch-free
// (GPT's and BERT's position lookups) takes its output gradient as P and passes P on. Its
// consumer sums over the batch shards, and Megatron-LM accumulates that sum into the weight's
// gradient, reduced once per iteration with the other gradients, not per micro-batch as an
// activation gradient.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "autoddl/costmodel/graph.hpp"
#include "autoddl/costmodel/sbp.hpp"

namespace autoddl::costmodel {

inline constexpr int kMaxOpInputs = 4;
inline constexpr int kMaxOpOutputs = 2;

struct Signature1D {
  std::array<Sbp, kMaxOpInputs> in{};
  std::array<Sbp, kMaxOpOutputs> out{};
};

// A kind's 1-D rule: appends its signatures (without the all-B one, which is added for every op).
using SbpRuleFn = void (*)(const Graph& graph, const Op& op, std::vector<Signature1D>& out);

struct OpSignature {
  std::array<NdSbp, kMaxOpInputs> in{};
  std::array<NdSbp, kMaxOpOutputs> out{};
  std::array<NdSbp, kMaxOpInputs> in_grad{};    // SBP of each input's gradient (backward)
  std::array<NdSbp, kMaxOpOutputs> out_grad{};  // SBP the backward needs for each output's gradient
  // Product of mesh sizes over dims where some operand is split: the op's work is divided by it.
  int compute_split = 1;
  int n_in = 0, n_out = 0;
};

// 1-D signatures of an op: the kind's rule, deduplicated, then the all-B signature (always last).
std::vector<Signature1D> signatures_1d(const Graph& graph, const Op& op);

// The nd signatures on a mesh of `mesh_shape` (ndims dims), given the shapes the op's inputs
// and outputs have in this scheme (micro-batch shapes). Includes backward SBPs.
std::vector<OpSignature> nd_signatures(const Graph& graph, const Op& op, const int* mesh_shape,
                                       int ndims, const std::vector<Shape>& in_shapes,
                                       const std::vector<Shape>& out_shapes);

// Bit o set when output o of `op` is batch-free (Tensor::batched false); derive_backward's rule.
uint8_t batch_free_outputs(const Graph& graph, const Op& op);

// The ranks a fused attention's queries are split over on the sequence (its input 0 as S(2) on
// SBP dims of `mesh_shape`: context parallelism's signature), 1 for any other op or signature.
int sequence_split_ranks(const Op& op, const OpSignature& sig, const int* mesh_shape);

// Fills in_grad/out_grad/compute_split of a signature whose in/out are set. `batch_free_outputs`
// is batch_free_outputs(graph, op).
void derive_backward(OpSignature& sig, const int* mesh_shape, uint8_t batch_free_outputs);

}  // namespace autoddl::costmodel
