// Mixture-of-Experts decoders: Llama-style pre-norm blocks (RMSNorm, attention, residual;
// RMSNorm, FFN, residual) whose FFN is, past the first `dense_layers`, a routed MoE layer:
// router (gating GEMM, softmax or sigmoid, top-k), token dispatch into expert slots, the
// experts' gated FFN as grouped GEMMs (gate, up, act ⊙, down), combine weighted by the router,
// plus `shared_experts` always-on experts as one dense gated FFN of shared_experts·expert_ffn.
// The gate's activation is the preset's: silu (SwiGLU) for most, gelu (GeGLU) for Grok-1; the
// two have the same shapes and GEMM FLOPs.
// Untied LM head, no dropout, bf16 and FlashAttention by default, as these models train.
// Shapes from each model's released config.json or code (sources in kPresets); docs/models.md lists
// them with parameter counts. Left out, each under 0.05% of parameters and FLOPs: Qwen3's
// q/k RMSNorms, GPT-OSS's expert and router biases and attention sinks, DeepSeek-V3's
// router bias (not trained by gradient). Not modelled: GPT-OSS's sliding-window layers (every
// other layer attends to 128 tokens: its attention FLOPs are counted in full). DeepSeek-V3's
// multi-token prediction module is the knob mtp (default 0, so the presets' counts are the main
// models'; DeepSeek-V3 trains with mtp=1, built in build() below). Grok-1's checkpoint ties its LM head to the input embedding
// (model.py: InOutEmbed.decode, "here, we use tied weights"); the preset keeps the family's
// untied head, as NeMo's Grok-1 recipe trains it (github.com/NVIDIA/dgxc-benchmarking,
// grok1/grok1_314b.yaml: share_embeddings_and_output_weights false), 0.8 B parameters more.
#include <iterator>
#include <string>
#include <utility>

#include "models.hpp"

namespace autoddl::costmodel::zoo {

namespace {

struct Preset {
  const char* name;
  const char* description;
  const char* source;
  int64_t layers, hidden, heads, kv_heads, head_dim, ffn, expert_ffn, experts, top_k, shared, dense_layers,
      vocab, seq;
  const char* router;     // softmax | sigmoid
  const char* activation; // silu (SwiGLU) | gelu (GeGLU): the gated FFNs' gate activation
  const char* attention;  // gqa | mla
  bool attn_bias;
  int64_t q_rank, kv_rank, nope_dim, rope_dim, v_dim;  // mla only
};

constexpr Preset kPresets[] = {
    {"mixtral-8x7b", "Mixtral 8x7B (Mistral AI 2024): 8 experts, top-2; 46.7 B parameters, 12.9 B active",
     "huggingface.co/mistralai/Mixtral-8x7B-v0.1/blob/main/config.json", 32, 4096, 32, 8, 128, 14336, 14336, 8, 2,
     0, 0, 32000, 4096, "softmax", "silu", "gqa", false, 0, 0, 0, 0, 0},
    {"mixtral-8x22b", "Mixtral 8x22B (Mistral AI 2024): 8 experts, top-2; 141 B parameters, 39 B active",
     "huggingface.co/mistralai/Mixtral-8x22B-v0.1/blob/main/config.json", 56, 6144, 48, 8, 128, 16384, 16384, 8,
     2, 0, 0, 32768, 4096, "softmax", "silu", "gqa", false, 0, 0, 0, 0, 0},
    {"qwen3-30b-a3b", "Qwen3-30B-A3B (Qwen 2025): 128 experts, top-8; 30.5 B parameters, 3.3 B active",
     "huggingface.co/Qwen/Qwen3-30B-A3B/blob/main/config.json", 48, 2048, 32, 4, 128, 6144, 768, 128, 8, 0, 0,
     151936, 4096, "softmax", "silu", "gqa", false, 0, 0, 0, 0, 0},
    {"qwen3-235b-a22b", "Qwen3-235B-A22B (Qwen 2025): 128 experts, top-8; 235 B parameters, 22 B active",
     "huggingface.co/Qwen/Qwen3-235B-A22B/blob/main/config.json", 94, 4096, 64, 4, 128, 12288, 1536, 128, 8, 0, 0,
     151936, 4096, "softmax", "silu", "gqa", false, 0, 0, 0, 0, 0},
    {"gpt-oss-120b", "GPT-OSS-120B (OpenAI 2025): 128 experts, top-4; 117 B parameters, 5.1 B active (without the embedding)",
     "huggingface.co/openai/gpt-oss-120b/blob/main/config.json", 36, 2880, 64, 8, 64, 2880, 2880, 128, 4, 0, 0,
     201088, 4096, "softmax", "silu", "gqa", true, 0, 0, 0, 0, 0},
    {"deepseek-v3", "DeepSeek-V3 (DeepSeek-AI 2024): MLA, 256 routed experts top-8 + 1 shared, first 3 layers dense; 671 B parameters, 37 B active",
     "huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json", 61, 7168, 128, 128, 128, 18432, 2048, 256, 8,
     1, 3, 129280, 4096, "sigmoid", "silu", "mla", false, 1536, 512, 128, 64, 128},
    // run.py's grok_1_model: emb_size 48·128, widening_factor 8 -> ffn_size() = 8·6144·2/3 =
    // 32768 per expert, 48 query / 8 KV heads of 128, 64 layers, 8 experts top-2, vocab
    // 128·1024; model.py: softmax router, experts gelu(x·W)⊙(x·W_v)·W_1, no biases. No dense
    // layers (ffn is unused; set to expert_ffn). seq 4096 as for the other presets (run.py's
    // sequence_len is 8192).
    {"grok-1", "Grok-1 (xAI 2024): 8 experts, top-2, GeGLU experts; 314 B parameters",
     "github.com/xai-org/grok-1/blob/main/run.py and model.py", 64, 6144, 48, 8, 128, 32768, 32768, 8, 2, 0, 0,
     131072, 4096, "softmax", "gelu", "gqa", false, 0, 0, 0, 0, 0},
};

// The gated unit: act(x·W_gate) ⊙ (x·W_up). Its product op is named after it (swiglu, geglu).
struct Glu {
  UnaryFn act;
  const char* name;
};

Glu glu_of(const Preset& p) {
  return std::string(p.activation) == "gelu" ? Glu{UnaryFn::gelu, "geglu"} : Glu{UnaryFn::silu, "swiglu"};
}

int gated_ffn(GraphBuilder& b, int h, int64_t ffn, const Glu& glu, const std::string& name) {
  const int64_t hidden = b.shape(h)[2];
  int gate = b.unary(name + ".gate_act", b.linear(name + ".gate", h, ffn, /*bias=*/false), glu.act);
  int up = b.linear(name + ".up", h, ffn, /*bias=*/false);
  return b.linear(name + ".down", b.mul(name + "." + glu.name, gate, up), hidden, /*bias=*/false);
}

struct MoeShape {
  int64_t experts, top_k, expert_ffn, shared;
  double capacity_factor;
  Glu glu;
};

int moe_ffn(GraphBuilder& b, int h, const MoeShape& m) {
  const int64_t hidden = b.shape(h)[2];
  int probs = b.moe_router("moe.router", h, b.parameter("moe.router.weight", {hidden, m.experts}));
  int slots = b.moe_dispatch("moe.dispatch", h, m.experts, static_cast<int>(m.top_k), m.capacity_factor);
  int gate = b.unary("moe.experts.gate_act", b.expert_linear("moe.experts.gate", slots, m.expert_ffn), m.glu.act);
  int up = b.expert_linear("moe.experts.up", slots, m.expert_ffn);
  int down = b.expert_linear("moe.experts.down", b.mul(std::string("moe.experts.") + m.glu.name, gate, up), hidden);
  int y = b.moe_combine("moe.combine", down, probs);
  if (m.shared > 0) y = b.add("moe.shared.sum", y, gated_ffn(b, h, m.shared * m.expert_ffn, m.glu, "moe.shared"));
  return y;
}

double capacity_factor_knob(const Knobs& k) {
  const std::string text = k.get_string("capacity_factor");
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !(v >= 1.0 && v <= 64.0)) {
    k.fail("capacity_factor", "must be a number in [1, 64] (got '" + text + "')");
  }
  return v;
}

Graph build(const Preset& p, const Knobs& k) {
  const int64_t layers = k.get_int("layers"), hidden = k.get_int("hidden"), heads = k.get_int("heads");
  const int64_t seq = k.get_int("seq"), batch = k.get_int("batch");
  const int64_t vocab = padded_vocab(k, k.get_int("vocab"));
  const int64_t experts = k.get_int("experts"), top_k = k.get_int("top_k");
  const int64_t dense_layers = k.get_int("dense_layers", 0), shared = k.get_int("shared_experts", 0);
  const int64_t ffn = k.get_int("ffn"), expert_ffn = k.get_int("expert_ffn");
  if (top_k > experts) k.fail("top_k", "must be at most experts = " + std::to_string(experts) + " (got " + std::to_string(top_k) + ")");
  if (dense_layers > layers) k.fail("dense_layers", "must be at most layers = " + std::to_string(layers));
  const std::string router = k.get_string("router");
  if (router != "softmax" && router != "sigmoid") k.fail("router", "must be softmax or sigmoid (got '" + router + "')");
  const MoeShape moe{experts, top_k, expert_ffn, shared, capacity_factor_knob(k), glu_of(p)};
  const DType dtype = model_dtype(k);
  const bool flash = flash_attention(k);
  const bool mla = std::string(p.attention) == "mla";
  const int64_t qh = padded_heads(k, heads);
  GqaShape gqa{};
  MlaShape mla_shape{};
  if (mla) {
    mla_shape = {heads, qh, k.get_int("q_rank"), k.get_int("kv_rank"), k.get_int("nope_dim"), k.get_int("rope_dim"),
                 k.get_int("v_dim")};
  } else {
    const int64_t kv_heads = k.get_int("kv_heads");
    if (heads % kv_heads != 0) {
      k.fail("kv_heads", "must divide heads (" + std::to_string(heads) + " % " + std::to_string(kv_heads) + " != 0)");
    }
    int64_t kvh = padded_heads(k, kv_heads);
    while (qh % kvh != 0) ++kvh;
    gqa = {heads, kv_heads, qh, kvh, k.get_int("head_dim"), p.attn_bias};
  }

  const int64_t mtp = k.get_int("mtp", 0);
  if (mtp > layers) k.fail("mtp", "must be at most layers = " + std::to_string(layers) + " (got " + std::to_string(mtp) + ")");

  GraphBuilder b(p.name, std::string("zoo:") + p.name, batch, dtype);
  int tokens = b.input("tokens", {batch, seq}, DType::int64);
  int labels = b.input("labels", {batch, seq}, DType::int64);
  const int embedding = b.parameter("embeddings.token", {vocab, hidden});
  // One decoder layer inside the open block: attention, then a dense or a routed MoE FFN.
  const auto decoder_layer = [&](int x, bool dense) {
    int n = b.rms_norm("attn_norm", x);
    int a = mla ? latent_attention(b, n, mla_shape, flash) : grouped_query_attention(b, n, gqa, flash);
    x = b.add("attn.residual", x, a);
    int h = b.rms_norm("ffn_norm", x);
    return b.add("ffn.residual", x, dense ? gated_ffn(b, h, ffn, moe.glu, "ffn") : moe_ffn(b, h, moe));
  };
  int x = b.embedding("embeddings.token_lookup", embedding, tokens);
  for (int64_t i = 0; i < layers; ++i) {
    b.begin_block("layer." + std::to_string(i));
    x = decoder_layer(x, i < dense_layers);
    b.end_block();
  }
  x = b.rms_norm("norm_f", x);
  // Multi-token prediction (DeepSeek-V3 report §2.2, Megatron-Core's MultiTokenPredictionLayer):
  // depth k normalizes the previous depth's output (the main model's after norm_f, as
  // Megatron-Core hands its decoder output over) and the embedding of the tokens k ahead (the
  // main model's table, shared), concatenates them [embedding, hidden] (2h), projects them back
  // to h (eh_proj, no bias), runs one decoder layer like the main model's last one (MoE for
  // DeepSeek-V3) and a final RMSNorm; the shared LM head and a cross-entropy then score it.
  // Each depth is one block "mtp.<k-1>", so a pipeline layout places it with `m`. The tokens'
  // and labels' shift by k (torch.roll) moves no work worth pricing and is left out, as is the
  // loss weight (mtp_loss_scaling_factor / depths).
  std::vector<int> mtp_out;
  int prev = x;
  for (int64_t d = 0; d < mtp; ++d) {
    b.begin_block("mtp." + std::to_string(d));
    int e = b.rms_norm("enorm", b.embedding("embed", embedding, tokens));
    int c = b.concat("eh_concat", {e, b.rms_norm("hnorm", prev)}, -1);
    int y = decoder_layer(b.linear("eh_proj", c, hidden, /*bias=*/false), dense_layers >= layers);
    prev = b.rms_norm("final_norm", y);
    b.end_block();
    mtp_out.push_back(prev);
  }
  const int head = b.parameter("lm_head.weight", {hidden, vocab});
  int loss = b.cross_entropy("loss", b.matmul("lm_head", x, head), labels);
  for (int64_t d = 0; d < mtp; ++d) {
    const std::string at = ".mtp." + std::to_string(d);
    int mtp_loss = b.cross_entropy("loss" + at, b.matmul("lm_head" + at, mtp_out[static_cast<size_t>(d)], head), labels);
    loss = b.add("loss_sum" + at, loss, mtp_loss);
  }
  return b.finish();
}

template <size_t I>
Graph build_preset(const Knobs& k) {
  return build(kPresets[I], k);
}

ZooModel row(const Preset& p, Graph (*builder)(const Knobs&)) {
  auto n = [](int64_t v) { return std::to_string(v); };
  std::vector<KnobSpec> own = {
      {"layers", n(p.layers), "decoder blocks"},
      {"hidden", n(p.hidden), "hidden size h"},
      {"heads", n(p.heads), "query heads"},
  };
  if (std::string(p.attention) == "mla") {
    own.push_back({"q_rank", n(p.q_rank), "MLA: query low-rank bottleneck (q_lora_rank)"});
    own.push_back({"kv_rank", n(p.kv_rank), "MLA: key/value latent (kv_lora_rank)"});
    own.push_back({"nope_dim", n(p.nope_dim), "MLA: q/k head size without rotary embedding (qk_nope_head_dim)"});
    own.push_back({"rope_dim", n(p.rope_dim), "MLA: rotary q/k head part, the key's shared by all heads (qk_rope_head_dim)"});
    own.push_back({"v_dim", n(p.v_dim), "MLA: value head size (v_head_dim)"});
  } else {
    own.push_back({"kv_heads", n(p.kv_heads), "key/value heads, dividing heads (grouped-query attention)"});
    own.push_back({"head_dim", n(p.head_dim), "attention head size"});
  }
  const std::string glu = std::string(p.activation) == "gelu" ? "GeGLU" : "SwiGLU";
  own.push_back({"ffn", n(p.ffn), glu + " inner size of the dense layers"});
  own.push_back({"dense_layers", n(p.dense_layers), "leading layers with a dense FFN instead of experts"});
  own.push_back({"experts", n(p.experts), "routed experts per MoE layer"});
  own.push_back({"top_k", n(p.top_k), "experts each token is routed to"});
  own.push_back({"expert_ffn", n(p.expert_ffn), glu + " inner size of one expert"});
  own.push_back({"shared_experts", n(p.shared), "always-active experts per MoE layer (one dense " + glu + " of shared_experts x expert_ffn)"});
  own.push_back({"router", p.router, "softmax or sigmoid gating scores (top-k of them route)"});
  own.push_back({"capacity_factor", "1",
                 "slots per expert over the balanced mean: 1 = dropless with balanced routing, as published "
                 "benchmarks force it; above 1 = the busiest expert's load (imbalance or a capacity factor)"});
  own.push_back({"mtp", "0",
                 "multi-token prediction depths (DeepSeek-V3 trains with 1): each one more decoder layer on the "
                 "last pipeline stage, with the shared embedding and LM head (Megatron-Core's --mtp-num-layers)"});
  own.push_back({"vocab", n(p.vocab), "vocabulary size"});
  own.push_back({"seq", n(p.seq), "sequence length"});
  std::vector<KnobSpec> knobs = with_transformer_knobs(std::move(own));
  for (KnobSpec& s : knobs) {
    if (s.name == "flash") s.default_value = "1";
    if (s.name == "dtype") s.default_value = "bf16";
  }
  return {p.name, p.description, knobs, builder};
}

template <size_t... I>
std::vector<ZooModel> rows(std::index_sequence<I...>) {
  return {row(kPresets[I], build_preset<I>)...};
}

}  // namespace

std::vector<ZooModel> moe_models() { return rows(std::make_index_sequence<std::size(kPresets)>{}); }

}  // namespace autoddl::costmodel::zoo
