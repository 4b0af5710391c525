// BERT pre-training (Devlin et al. 2019; HuggingFace BertForPreTraining layout): word,
// position and token-type embeddings with LayerNorm, `layers` post-LN encoder blocks, the
// pooler (dense + tanh on the first token), the NSP head and the MLM head (dense, GeLU,
// LayerNorm, decoder tied to the word embedding, own bias), loss = MLM + NSP cross-entropy.
// base/large = 12/768/12 and 24/1024/16; BERT-large encoder + pooler = 335,141,888 parameters.
#include "models.hpp"

namespace autoddl::costmodel::zoo {

namespace {
struct Size {
  const char* name;
  int64_t layers, hidden, heads;
};
constexpr Size kSizes[] = {{"base", 12, 768, 12}, {"large", 24, 1024, 16}};

// A layers/hidden/heads knob: "auto" takes the value of the chosen size.
int64_t sized_knob(const Knobs& k, const std::string& name, int64_t from_size) {
  return k.get_string(name) == "auto" ? from_size : k.get_int(name);
}

Graph build(const Knobs& k) {
  std::string size_name = k.get_string("size");
  const Size* size = nullptr;
  for (const Size& s : kSizes) {
    if (size_name == s.name) size = &s;
  }
  if (!size) k.fail("size", "must be base or large (got '" + size_name + "')");
  int64_t layers = sized_knob(k, "layers", size->layers);
  int64_t hidden = sized_knob(k, "hidden", size->hidden);
  int64_t heads = sized_knob(k, "heads", size->heads);
  int64_t seq = k.get_int("seq"), vocab = k.get_int("vocab"), batch = k.get_int("batch");
  vocab = padded_vocab(k, vocab);
  DType dtype = model_dtype(k);
  check_heads_divide_hidden(k, hidden, heads);

  GraphBuilder b("bert", "zoo:bert", batch, dtype);
  int tokens = b.input("tokens", {batch, seq}, DType::int64);
  int token_types = b.input("token_types", {batch, seq}, DType::int64);
  int positions = b.input("positions", {seq}, DType::int64, /*batched=*/false);
  // Row i·seq of the (batch·seq, hidden) view of the encoder output: the first ([CLS]) token.
  int first_rows = b.input("first_token_rows", {batch}, DType::int64);
  int mlm_labels = b.input("mlm_labels", {batch, seq}, DType::int64);
  int nsp_labels = b.input("nsp_labels", {batch}, DType::int64);

  int word = b.parameter("embeddings.word", {vocab, hidden});
  int pos = b.parameter("embeddings.position", {seq, hidden});
  int type = b.parameter("embeddings.token_type", {2, hidden});
  int x = b.add("embeddings.sum", b.embedding("embeddings.word_lookup", word, tokens),
                b.embedding("embeddings.token_type_lookup", type, token_types));
  x = b.add("embeddings.sum_position", x,
            b.embedding("embeddings.position_lookup", pos, positions));
  x = b.dropout("embeddings.dropout", b.ln("embeddings.ln", x));

  for (int64_t i = 0; i < layers; ++i) {
    b.begin_block("layer." + std::to_string(i));
    int a = b.dropout("attn.dropout",
                      self_attention(b, x, heads, padded_heads(k, heads), flash_attention(k), /*causal=*/false));
    x = b.ln("attn.ln", b.add("attn.residual", x, a));
    int f = b.gelu("ffn.gelu", b.linear("ffn.fc1", x, 4 * hidden));
    f = b.dropout("ffn.dropout", b.linear("ffn.fc2", f, hidden));
    x = b.ln("ffn.ln", b.add("ffn.residual", x, f));
    b.end_block();
  }

  // Pooler: x[:, 0] as a gather of rows i·seq from x viewed as (batch·seq, hidden).
  int rows = b.reshape("pooler.rows", x, {batch * seq, hidden});
  int first = b.embedding("pooler.first_token", rows, first_rows);
  int pooled = b.tanh("pooler.tanh", b.linear("pooler.dense", first, hidden));
  int nsp_loss = b.cross_entropy("cls.nsp.loss", b.linear("cls.nsp", pooled, 2), nsp_labels);

  int t = b.ln("cls.mlm.ln", b.gelu("cls.mlm.gelu", b.linear("cls.mlm.transform", x, hidden)));
  int logits = b.matmul("cls.mlm.decoder", t, word, /*transpose_b=*/true);
  logits =
      b.bias_add("cls.mlm.decoder.add_bias", logits, b.parameter("cls.mlm.decoder.bias", {vocab}));
  int mlm_loss = b.cross_entropy("cls.mlm.loss", logits, mlm_labels);
  b.add("loss", mlm_loss, nsp_loss);
  return b.finish();
}
}  // namespace

ZooModel bert_model() {
  return {"bert",
          "BERT pre-training (MLM + NSP heads, pooler, tied decoder), post-LN encoder",
          with_transformer_knobs({
              {"size", "base", "base (12 layers, 768 hidden, 12 heads) or large (24, 1024, 16)"},
              {"layers", "auto", "encoder blocks (auto: from size)"},
              {"hidden", "auto", "hidden size h, FFN is 4h (auto: from size)"},
              {"heads", "auto", "attention heads, must divide hidden (auto: from size)"},
              {"seq", "512", "sequence length (and position-embedding rows)"},
              {"vocab", "30522", "vocabulary size (WordPiece, uncased)"}}),
          build};
}

}  // namespace autoddl::costmodel::zoo
