// Internal to the zoo: each model file zoo/<name>.cpp defines one function returning its row
// (name, description, knobs, builder) for the table in zoo/registry.cpp, plus the pieces the
// transformer builders share (attention.cpp).
#pragma once
#include "autoddl/costmodel/graph_builder.hpp"
#include "autoddl/costmodel/zoo.hpp"

namespace autoddl::costmodel::zoo {

ZooModel mlp_model();
ZooModel vgg16_model();
ZooModel resnet50_model();
ZooModel bert_model();
ZooModel gpt_model();
ZooModel ncf_model();
ZooModel resnet101_model();
ZooModel densenet121_model();
ZooModel inception_v3_model();
ZooModel llama_model();
// Mixture-of-Experts decoders (zoo/moe.cpp), one row per published model.
std::vector<ZooModel> moe_models();

// Multi-head self-attention on x(batch, seq, hidden), built from its primitive ops: Q, K, V
// projections, split into heads (batch, heads, seq, hidden/heads), Q·Kᵀ, softmax (scale and
// mask fused), dropout, ·V, merge heads, output projection. Returns the projection's output.
// Names are "attn.*" under the builder's current block. `padded_heads` >= heads: heads of size
// hidden/heads, the extra ones padding (see padded_heads()).
// `flash`: the core (scores, softmax, dropout, ·V) is one fused attention op (FlashAttention);
// `causal` masks the future (GPT), which the fused kernel exploits.
int self_attention(GraphBuilder& b, int x, int64_t heads, int64_t padded_heads, bool flash, bool causal);

// Llama's attention: Q/K/V/O projections without bias, K and V with kv_heads heads shared by
// groups of query heads (grouped-query attention), causal; `flash` as above (the eager core
// repeats each K/V head for its group, as Hugging Face's repeat_kv does). Rotary position
// embeddings are left out: an elementwise rotation of q and k, fused into the attention or
// projection kernels in Megatron-LM/TE, under 0.1% of the FLOPs.
int grouped_query_attention(GraphBuilder& b, int x, int64_t heads, int64_t kv_heads, int64_t padded_heads,
                            int64_t padded_kv_heads, bool flash);

// Grouped-query attention with its own head size (Qwen3, GPT-OSS: heads·head_dim != hidden)
// and optional projection biases (GPT-OSS).
struct GqaShape {
  int64_t heads, kv_heads, padded_heads, padded_kv_heads, head_dim;
  bool bias;
};
int grouped_query_attention(GraphBuilder& b, int x, const GqaShape& a, bool flash);

// DeepSeek-V2/V3's multi-head latent attention (MLA): queries through a q_rank bottleneck,
// keys and values from one kv_rank latent, heads of nope_dim + rope_dim for q·k (the rotary
// part of k one 64-wide head shared by all) and v_dim for v. Names "attn.*".
struct MlaShape {
  int64_t heads, padded_heads, q_rank, kv_rank, nope_dim, rope_dim, v_dim;
};
int latent_attention(GraphBuilder& b, int x, const MlaShape& a, bool flash);

// Fails with InputError("--set", "heads", "must divide hidden (768 % 10 != 0)") when needed.
void check_heads_divide_hidden(const Knobs& k, int64_t hidden, int64_t heads);

// The vocabulary rounded up to a multiple of the `vocab_pad` knob (Megatron-LM pads to 128 so
// that vocab-parallel embeddings split evenly; 1 keeps the published size).
int64_t padded_vocab(const Knobs& k, int64_t vocab);

// The attention heads rounded up to a multiple of the `heads_pad` knob (1 = none). Padding keeps
// the head size hidden/heads, so with heads_pad = tp every tensor-parallel rank holds
// ⌈heads/tp⌉ heads: the busiest rank of an uneven head split, which sets the iteration time.
int64_t padded_heads(const Knobs& k, int64_t heads);

// A transformer's own knobs followed by those BERT and GPT share: vocab_pad, heads_pad, batch
// (8 sequences), dtype (fp16).
std::vector<KnobSpec> with_transformer_knobs(std::vector<KnobSpec> own);

// Knobs shared by the image classifiers (vgg16, resnet50): batch, image, classes, dtype.
std::vector<KnobSpec> image_classifier_knobs();

// Conv (no bias) + BatchNorm + ReLU with a kernel_h x kernel_w kernel and "same"-style padding
// (pad_h, pad_w). A square kernel with pad_h == pad_w is one conv2d op. A non-square kernel
// (Inception's 1x7, 7x1, 1x3, 3x1; stride 1) is lowered im2col-style, because conv2d's pad is
// one value for both axes: the input's kernel_h·kernel_w shifted windows concatenated on the
// channels, then a 1x1 convolution. Parameters (K·C·R·S) and multiply-accumulates
// (N·K·C·R·S·H·W) are exactly those of the real convolution; the concat adds the memory traffic
// an explicit im2col would have.
int conv_bn_relu(GraphBuilder& b, const std::string& name, int x, int64_t out_channels,
                 int kernel_h, int kernel_w, int stride, int pad_h, int pad_w);

// The model dtype knob, which must be a floating-point type.
DType model_dtype(const Knobs& k);
// The `flash` knob: 1 = fused FlashAttention core, 0 = the unfused 2021-era core.
bool flash_attention(const Knobs& k);

}  // namespace autoddl::costmodel::zoo
