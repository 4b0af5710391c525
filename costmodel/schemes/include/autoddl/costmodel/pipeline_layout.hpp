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

// A balanced layout of `g` over `chunks` virtual stages, for pipeline splits the layers do not
// divide (DeepSeek-V3's 61 on pp x interleave = 32): E opens the first stage, the MTP layers and
// L close the last, and the decoder layers go one at a time to the stage with the least work so
// far (forward plus backward FLOPs, counted in mean decoder layers, so the embedding weighs about
// nothing and the output layer and loss over a layer on a large vocabulary), a tie to the later
// stage: the lighter stages come first, where the 1F1B schedule keeps the most activations in
// flight. On DeepSeek-V3 at 32 stages this is NVIDIA's "Et|(tt|)*30L". Empty when a stage
// would hold nothing (more stages than layers) or `g` has no layers.
std::vector<std::string> balanced_pipeline_layout(const Graph& g, int64_t chunks);

// The largest stage work of balanced_pipeline_layout(g, chunks), in mean decoder layers (0 when
// that is empty): what the Megatron grid compares interleave counts by.
double balanced_pipeline_load(const Graph& g, int64_t chunks);

// The layout an op-to-chunk assignment realises (inverse of op_chunks_from_layout), "" when it
// is not one (a block split over chunks, chunks out of order).
std::string layout_of_op_chunks(const Graph& g, const std::vector<int>& op_chunk, int chunks);

}  // namespace autoddl::costmodel
