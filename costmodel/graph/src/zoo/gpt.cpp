// GPT (Radford et al. 2019, GPT-2; Brown et al. 2020, GPT-3): learned token and position
// embeddings, `layers` pre-LN blocks (LayerNorm, self-attention, residual; LayerNorm, 4h FFN
// with GeLU, residual), a final LayerNorm and an LM head tied to the token embedding (matmul
// with transpose_b). 12h² + 13h parameters per block: GPT-2 XL (48, 1600, 25 heads) has
// 1.558 B, GPT-3 (96, 12288, 96 heads, seq 2048) 174.6 B. Blocks are "layer.0" ...
#include "models.hpp"

namespace autoddl::costmodel::zoo {

namespace {
Graph build(const Knobs& k) {
  int64_t layers = k.get_int("layers"), hidden = k.get_int("hidden");
  int64_t heads = k.get_int("heads"), seq = k.get_int("seq"), vocab = k.get_int("vocab");
  int64_t batch = k.get_int("batch");
  vocab = padded_vocab(k, vocab);
  DType dtype = model_dtype(k);
  check_heads_divide_hidden(k, hidden, heads);
  const bool flash = flash_attention(k);

  GraphBuilder b("gpt", "zoo:gpt", batch, dtype);
  int tokens = b.input("tokens", {batch, seq}, DType::int64);
  int positions = b.input("positions", {seq}, DType::int64, /*batched=*/false);
  int labels = b.input("labels", {batch, seq}, DType::int64);
  int wte = b.parameter("embeddings.token", {vocab, hidden});
  int wpe = b.parameter("embeddings.position", {seq, hidden});
  int x = b.add("embeddings.sum", b.embedding("embeddings.token_lookup", wte, tokens),
                b.embedding("embeddings.position_lookup", wpe, positions));
  x = b.dropout("embeddings.dropout", x);

  for (int64_t i = 0; i < layers; ++i) {
    b.begin_block("layer." + std::to_string(i));
    int a = self_attention(b, b.ln("ln1", x), heads, padded_heads(k, heads), flash, /*causal=*/true);
    x = b.add("attn.residual", x, b.dropout("attn.dropout", a));
    int f = b.gelu("ffn.gelu", b.linear("ffn.fc1", b.ln("ln2", x), 4 * hidden));
    f = b.dropout("ffn.dropout", b.linear("ffn.fc2", f, hidden));
    x = b.add("ffn.residual", x, f);
    b.end_block();
  }
  x = b.ln("ln_f", x);
  int logits = b.matmul("lm_head", x, wte, /*transpose_b=*/true);  // (batch, seq, vocab)
  b.cross_entropy("loss", logits, labels);
  return b.finish();
}
}  // namespace

ZooModel gpt_model() {
  return {"gpt",
          "GPT decoder (GPT-2/3 layout: pre-LN, tied LM head); defaults are GPT-2 small",
          with_transformer_knobs({
              {"layers", "12", "transformer blocks"},
              {"hidden", "768", "hidden size h (FFN is 4h)"},
              {"heads", "12", "attention heads (must divide hidden)"},
              {"seq", "1024", "sequence length (and position-embedding rows)"},
              {"vocab", "50257", "vocabulary size"}}),
          build};
}

}  // namespace autoddl::costmodel::zoo
