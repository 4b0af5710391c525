// Activation memory as Megatron-LM and Korthikanti et al. 2022 ("Reducing Activation
// Recomputation in Large Transformer Models", §4) account it: a tensor is kept for backward
// only when some op's backward reads it (op_registry.hpp, SavedForBackward), at its producer's
// SBP. GPT's layer then keeps 34·s·b·h + 5·a·s²·b bytes (fp16), selective recompute drops the
// attention core's 5·a·s²·b, full recompute keeps each block's input and re-runs the block.
// evaluate() and search's cost tables both read these factors, so they agree by construction.
#pragma once
#include <vector>

#include "autoddl/costmodel/graph.hpp"
#include "autoddl/costmodel/scheme.hpp"

namespace autoddl::costmodel {

// Per tensor, bytes kept per byte of the tensor (at its producer's SBP, one micro-batch).
struct ActivationFactors {
  // Kept from forward to backward: multiplied by the micro-batches in flight on its stage.
  std::vector<double> kept;
  // Full recompute only: live while its block's forward is re-run in backward (one block of a
  // stage at a time, so a stage holds the largest block's sum once).
  std::vector<double> recomputed;
  // Per op: bit k set when the op keeps its input k for backward (at the SBP it reads it in:
  // stage_memory keeps a tensor at the smaller of its producer's and its keepers' layouts).
  std::vector<uint32_t> saves_input;
};

// What backward reads of tensor t without recompute (0 for parameters and graph inputs).
std::vector<double> saved_factors(const Graph& graph);

// The factors under a recompute mode. Selective drops what the recomputed modules produce
// (`modules`, recompute_modules.hpp; 0: the attention core, is_attention_core); full keeps only tensors that enter a block from outside it
// (Megatron checkpoints each transformer layer's input) and what ops outside blocks need
// (embeddings, final norm, LM head and loss are not recomputed).
ActivationFactors activation_factors(const Graph& graph, Recompute recompute, uint32_t modules = 0);

}  // namespace autoddl::costmodel
