#pragma once
// Megatron-Core's --pipeline-model-parallel-layout: which layers each virtual pipeline stage
// holds, for models whose layers do not split evenly (DeepSeek-V3's 61 layers on pp=8, vp=4).
// The text is Megatron's: one symbol per layer (E the embedding, t a decoder layer, m a
// multi-token-prediction layer, L the final norm, output layer and loss), '|' between stages,
// "X*N" and "(...)*N" repeat. Stage i runs on pipeline rank i % pp as its virtual stage i / pp.
// E.g. NVIDIA's DeepSeek-V3 recipe on 1,024 H100 (Megatron-Bridge v0.6.0,
// perf_recipes/deepseek/h100/deepseek_v3.py) "Et|(tt|)*30mL" is 32 stages: the embedding and
// 1 layer, 30 stages of 2 layers, the MTP layer and the loss.
#include <string>
#include <vector>

#include "autoddl/costmodel/graph.hpp"

namespace autoddl::costmodel {

// The stages of `text`, each the string of its symbols ("Ettt", "tt", "", "L"); throws
// InputError(field, ...) naming the position of a syntax error or an unknown symbol.
std::vector<std::string> parse_pipeline_layout(const std::string& text, const std::string& field = "layout");

// The layout as Megatron's text, runs of equal stages folded ("Ettt|(tt|)*29m|L" style).
std::string pipeline_layout_text(const std::vector<std::string>& stages);

// Per op, its stage under `stages` on `g`: the decoder layers (blocks, in order) go where the
// t's are, the multi-token-prediction blocks (is_mtp_block) where the m's are; ops before the
// first block go with E, those between blocks with the block before them (the final norm stays
// with the last decoder layer when MTP layers follow it, as in Megatron-Core), those after the
// last block with L. Throws InputError(field, ...) when the t's do not count the decoder layers or
// the m's the MTP layers, E does not open the first stage or L close the last, a t follows an m,
// or the m's are spread over stages (Megatron-Core's validate_layer_layout refuses both).
std::vector<int> op_chunks_from_layout(const Graph& g, const std::vector<std::string>& stages,
                                       const std::string& field = "layout");

// The layout an op-to-chunk assignment realises (inverse of op_chunks_from_layout), "" when it
// is not one (a block split over chunks, chunks out of order).
std::string layout_of_op_chunks(const Graph& g, const std::vector<int>& op_chunk, int chunks);

}  // namespace autoddl::costmodel
