// One row per op kind: its name and the rules that make it an op (shape inference and work).
// Adding a kind = one file costmodel/graph/src/ops/<kind>.cpp plus one row in ops/registry.cpp.
// The SBP signature rules of each kind join this row in the SBP cost model.
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

struct OpKindInfo {
  OpKind kind;
  std::string_view name;  // as written in graph JSON: "matmul", "conv2d", ...
  int min_inputs, max_inputs;
  // Output shapes from the input tensors and attrs. Throws InputError(graph.source,
  // "op <name>", reason) when the inputs do not fit the rule.
  std::vector<Shape> (*infer_shapes)(const Graph& graph, const Op& op);
  // Forward/backward FLOPs and bytes of the op on its logical shapes (whole batch).
  OpWork (*work)(const Graph& graph, const Op& op);
  // The kind's 1-D SBP signatures (signature.hpp); nullptr = only the all-B signature.
  SbpRuleFn sbp_rules = nullptr;
  // What backward needs kept (above); nullptr = nothing.
  SavedForBackward (*saved)(const Graph& graph, const Op& op) = nullptr;
  // Runs as a GEMM: priced with the GPU's matmul efficiency tables (FP8 ones under dtype=fp8),
  // and under tp_overlap the sequence-parallel collectives next to it hide under it.
  bool gemm = false;
};

const std::vector<OpKindInfo>& op_kinds();
const OpKindInfo& op_kind_info(OpKind kind);
// Returns nullptr for an unknown name.
const OpKindInfo* find_op_kind(std::string_view name);

std::string_view unary_fn_name(UnaryFn f);
std::string_view binary_fn_name(BinaryFn f);
std::string_view pool_fn_name(PoolFn f);
bool parse_unary_fn(std::string_view s, UnaryFn& out);
bool parse_binary_fn(std::string_view s, BinaryFn& out);
bool parse_pool_fn(std::string_view s, PoolFn& out);

}  // namespace autoddl::costmodel
