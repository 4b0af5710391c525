// The op table: one row per op kind with everything the cost model knows about it (shape rule,
// FLOPs and bytes, SBP rules, what backward keeps, traits). A built-in kind is one file
// costmodel/graph/src/ops/<kind>.cpp (defining its row, ops::<kind>_kind()) plus one row of
// AUTODDL_BUILTIN_OP_KINDS (op_kind.hpp); code outside the graph layer asks the row's traits,
// never the kind's name. register_op_kind() adds a kind at run time (tests' toy kinds).
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "autoddl/costmodel/graph.hpp"
#include "autoddl/costmodel/signature.hpp"

namespace autoddl::costmodel {

// What an op's backward reads that its forward must keep alive: exactly the tensors Korthikanti
// et al. 2022 (§4.1) count as activation memory. Views, bias-adds and residual adds keep nothing.
struct SavedForBackward {
  uint32_t inputs = 0;                // bit k: input k is kept (only activations count as memory)
  bool output = false;                // the op's own output is kept (softmax, relu, tanh, sigmoid)
  double mask_bytes_per_element = 0;  // a 1-byte mask per output element (dropout)
  bool inputs_in_fp32 = false;        // kept inputs are held in fp32 (Megatron's cross-entropy logits)
};

// How Megatron's tensor-parallel role (expert_schemes.hpp) splits a kind's weight.
enum class TpWeight : uint8_t {
  none,        // no weight to split: the op keeps the splits it is given
  gemm,        // a weight matrix: column-parallel, or row-parallel when the input arrives split on k
  vocab_rows,  // a lookup table split by rows (vocab-parallel)
};

// Which measured rate prices a kind's memory-bound kernels (GpuSpec::norm_fwd_rate ...): most
// move their bytes at the streaming rate of a plain elementwise kernel; norms and the loss do not.
enum class MemoryKernel : uint8_t {
  streaming,  // elementwise, copies, reductions along the fast axis
  norm,       // LayerNorm / RMSNorm: a row reduction, and in backward a second kernel for dgamma
  loss,       // softmax cross-entropy over the vocabulary: several passes over fp32 logits
};

// Where a kind stands in a Mixture-of-Experts layer: the dispatch enters the expert region
// (its output is laid out (token slots, experts, ...)), the combine leaves it. The tensors in
// between are the experts' (expert_major_tensors, graph.hpp): expert parallelism splits them,
// and their weights, on the experts axis.
enum class MoeBoundary : uint8_t { none, enters, leaves };

// One GEMM: batch independent products of (m, k) · (k, n).
struct GemmDims {
  int64_t batch = 1, m = 0, n = 0, k = 0;
};

struct OpKindInfo {
  OpKind kind{};  // set by the table (register_op_kind writes the new id)
  std::string_view name;  // as written in graph JSON: "matmul", "conv2d", ...
  int min_inputs, max_inputs;
  // Output shapes from the input tensors and attrs. Throws InputError(graph.source,
  // "op <name>", reason) when the inputs do not fit the rule.
  std::vector<Shape> (*infer_shapes)(const Graph& graph, const Op& op);
  // Forward/backward FLOPs and bytes of the op on its logical shapes (whole batch).
  OpWork (*work)(const Graph& graph, const Op& op);
  // The kind's 1-D SBP signatures (signature.hpp; OneFlow's table, sbp-and-search.md §2.2,
  // plus what DESIGN.md adds: conv2d's channel splits, vocab-parallel embedding and
  // cross-entropy, reshape/transpose mapping splits across axes); signatures_1d() adds the
  // all-B signature to every kind. nullptr = only the all-B signature.
  SbpRuleFn sbp_rules = nullptr;
  // What backward needs kept (above); nullptr = nothing.
  SavedForBackward (*saved)(const Graph& graph, const Op& op) = nullptr;
  // Runs as a GEMM: priced with the GPU's matmul efficiency tables (FP8 ones under dtype=fp8),
  // and under tp_overlap the sequence-parallel collectives next to it hide under it.
  bool gemm = false;
  // How the tensor-parallel role splits its weight (above).
  TpWeight tp_weight = TpWeight::none;
  // The forward GEMM on the (local) shapes of inputs 0 and 1; nullptr = not one GEMM.
  GemmDims (*gemm_dims)(const Shape& a, const Shape& b, const OpAttrs& attrs) = nullptr;
  // The measured rate its non-GEMM kernels move bytes at (above).
  MemoryKernel memory_kernel = MemoryKernel::streaming;
  // A weight GEMM of this kind runs in FP8 under dtype=fp8 (Transformer Engine's Linear layers);
  // false for those Megatron-Core keeps out of fp8_autocast (the MoE router).
  bool fp8_gemm = true;
  // Its place in a Mixture-of-Experts layer (above).
  MoeBoundary moe = MoeBoundary::none;
};

// Every kind, built-in then registered; op_kinds()[i].kind == OpKind(i).
const std::vector<OpKindInfo>& op_kinds();
const OpKindInfo& op_kind_info(OpKind kind);
// Returns nullptr for an unknown name.
const OpKindInfo* find_op_kind(std::string_view name);
// Adds a kind at run time (test code's toy kinds; the graph JSON then reads it by name) and
// returns its id, which it also writes into the stored row's `kind`. Not thread-safe: register
// before anything builds or costs graphs. Throws std::logic_error (AUTODDL_CHECK) for a name
// already taken, missing shape/work rules or arity, or more than 256 kinds.
OpKind register_op_kind(OpKindInfo info);
// Removes the kind registered last (a test's toy, after the test); `kind` must be it.
void unregister_op_kind(OpKind kind);

std::string_view unary_fn_name(UnaryFn f);
std::string_view binary_fn_name(BinaryFn f);
std::string_view pool_fn_name(PoolFn f);
bool parse_unary_fn(std::string_view s, UnaryFn& out);
bool parse_binary_fn(std::string_view s, BinaryFn& out);
bool parse_pool_fn(std::string_view s, PoolFn& out);

}  // namespace autoddl::costmodel
