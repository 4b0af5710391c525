// Llama (Touvron et al. 2023, Llama 2; Meta 2024, Llama 3 / 3.1): a token embedding without
// position embeddings (rotary, see grouped_query_attention), `layers` pre-norm blocks (RMSNorm,
// grouped-query self-attention without biases, residual; RMSNorm, SwiGLU FFN: silu(x·W_gate) ⊙
// (x·W_up), then ·W_down, residual), a final RMSNorm and an LM head of its own (not tied). No
// dropout. Sizes from the models' published configs (config.json on release): parameters are
// 2·V·h + L·(2h² + 2h·kv·h/heads + 3h·ffn + 2h) + h, e.g. Llama-2 7B 6.738 B, Llama-3 8B 8.030 B,
// Llama-3.1 405B 405.85 B.
#include "models.hpp"

namespace autoddl::costmodel::zoo {

namespace {
struct Size {
  const char* name;
  int64_t layers, hidden, heads, kv_heads, ffn, vocab, seq;
};
// Llama 2: 32000-token vocabulary, 4096 context; Llama 3 / 3.1: 128256 tokens, 8192 context
// (the pre-training length; 3.1's long-context phase is not modelled).
constexpr Size kSizes[] = {
    {"2-7b", 32, 4096, 32, 32, 11008, 32000, 4096},     {"2-13b", 40, 5120, 40, 40, 13824, 32000, 4096},
    {"2-70b", 80, 8192, 64, 8, 28672, 32000, 4096},     {"3-8b", 32, 4096, 32, 8, 14336, 128256, 8192},
    {"3-70b", 80, 8192, 64, 8, 28672, 128256, 8192},    {"3-405b", 126, 16384, 128, 8, 53248, 128256, 8192},
    // Llama 3.1's release names (meta-llama/Llama-3.1-*): the same layer shapes as Llama 3's.
    {"3.1-8b", 32, 4096, 32, 8, 14336, 128256, 8192},   {"3.1-70b", 80, 8192, 64, 8, 28672, 128256, 8192},
    {"3.1-405b", 126, 16384, 128, 8, 53248, 128256, 8192},
};

std::string size_names() {
  std::string s;
  for (const Size& z : kSizes) s += (s.empty() ? "" : ", ") + std::string(z.name);
  return s;
}

int64_t sized(const Knobs& k, const std::string& name, int64_t from_size) {
  return k.get_string(name) == "auto" ? from_size : k.get_int(name);
}

Graph build(const Knobs& k) {
  const std::string size_name = k.get_string("size");
  const Size* size = nullptr;
  for (const Size& s : kSizes) {
    if (size_name == s.name) size = &s;
  }
  if (!size) k.fail("size", "must be one of " + size_names() + " (got '" + size_name + "')");
  const int64_t layers = sized(k, "layers", size->layers), hidden = sized(k, "hidden", size->hidden);
  const int64_t heads = sized(k, "heads", size->heads), kv_heads = sized(k, "kv_heads", size->kv_heads);
  const int64_t ffn = sized(k, "ffn", size->ffn), seq = sized(k, "seq", size->seq);
  const int64_t vocab = padded_vocab(k, sized(k, "vocab", size->vocab));
  const int64_t batch = k.get_int("batch");
  const DType dtype = model_dtype(k);
  check_heads_divide_hidden(k, hidden, heads);
  if (kv_heads < 1 || heads % kv_heads != 0) {
    k.fail("kv_heads", "must divide heads (" + std::to_string(heads) + " % " + std::to_string(kv_heads) + " != 0)");
  }
  // With heads padded for an uneven tensor-parallel split, K/V heads pad to the same multiple
  // (Megatron-LM replicates K/V heads when tp exceeds them).
  const int64_t qh = padded_heads(k, heads);
  int64_t kvh = padded_heads(k, kv_heads);
  while (qh % kvh != 0) ++kvh;

  GraphBuilder b("llama", "zoo:llama", batch, dtype);
  int tokens = b.input("tokens", {batch, seq}, DType::int64);
  int labels = b.input("labels", {batch, seq}, DType::int64);
  int x = b.embedding("embeddings.token_lookup", b.parameter("embeddings.token", {vocab, hidden}), tokens);
  for (int64_t i = 0; i < layers; ++i) {
    b.begin_block("layer." + std::to_string(i));
    int a = grouped_query_attention(b, b.rms_norm("attn_norm", x), heads, kv_heads, qh, kvh, flash_attention(k));
    x = b.add("attn.residual", x, a);
    int h = b.rms_norm("ffn_norm", x);
    int gate = b.unary("ffn.gate_act", b.linear("ffn.gate", h, ffn, /*bias=*/false), UnaryFn::silu);
    int up = b.linear("ffn.up", h, ffn, /*bias=*/false);
    x = b.add("ffn.residual", x, b.linear("ffn.down", b.mul("ffn.swiglu", gate, up), hidden, /*bias=*/false));
    b.end_block();
  }
  x = b.rms_norm("norm_f", x);
  int logits = b.matmul("lm_head", x, b.parameter("lm_head.weight", {hidden, vocab}));
  b.cross_entropy("loss", logits, labels);
  return b.finish();
}
}  // namespace

ZooModel llama_model() {
  std::vector<KnobSpec> knobs = with_transformer_knobs({
      {"size", "2-7b", "2-7b, 2-13b, 2-70b (Llama 2), 3-8b, 3-70b, 3-405b (Llama 3), 3.1-8b, 3.1-70b, 3.1-405b (the same shapes)"},
      {"layers", "auto", "decoder blocks (auto: from size)"},
      {"hidden", "auto", "hidden size h (auto: from size)"},
      {"heads", "auto", "query heads (auto: from size)"},
      {"kv_heads", "auto", "key/value heads, dividing heads: grouped-query attention (auto: from size)"},
      {"ffn", "auto", "SwiGLU inner size (auto: from size)"},
      {"seq", "auto", "sequence length (auto: the size's pre-training context, 4096 or 8192)"},
      {"vocab", "auto", "vocabulary size (auto: 32000 for Llama 2, 128256 for Llama 3)"}});
  // Modern defaults: FlashAttention and bf16, as Llama models are trained.
  for (KnobSpec& s : knobs) {
    if (s.name == "flash") s.default_value = "1";
    if (s.name == "dtype") s.default_value = "bf16";
  }
  return {"llama", "Llama 2 / 3 decoder (RMSNorm, grouped-query attention, SwiGLU, untied head); defaults: Llama-2 7B",
          knobs, build};
}

}  // namespace autoddl::costmodel::zoo
