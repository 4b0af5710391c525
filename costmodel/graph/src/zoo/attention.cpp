// Multi-head self-attention (Vaswani et al. 2017) from primitive ops, shared by BERT and GPT:
// separate Q/K/V projections (parameter-equal to a fused QKV: 3h² + 3h), heads split by a
// reshape and a transpose, scores by a batched matmul Q·Kᵀ (transpose_b) of shape
// (batch, heads, seq, seq), softmax with scale and mask fused (Megatron-LM), dropout, ·V.
// With the `flash` knob the core is one fused attention op (FlashAttention-2: no s×s tensor in
// HBM or kept for backward; dropout fused, its mask regenerated from the RNG state).
// Padded heads (the `heads_pad` knob) are extra heads of the same size: what the busiest rank
// computes when a tensor-parallel degree does not divide the heads and ranks hold ⌈heads/tp⌉.
#include <string>

#include "models.hpp"

namespace autoddl::costmodel::zoo {

namespace {
// (batch, seq, hidden) -> (batch, heads, seq, head_dim)
int split_heads(GraphBuilder& b, const std::string& name, int t, int64_t heads, int64_t head_dim) {
  Shape s = b.shape(t);
  int r = b.reshape(name + ".split", t, {s[0], s[1], heads, head_dim});
  return b.transpose(name + ".heads", r, {0, 2, 1, 3});
}
}  // namespace

int self_attention(GraphBuilder& b, int x, int64_t heads, int64_t padded_heads, bool flash, bool causal) {
  Shape s = b.shape(x);  // (batch, seq, hidden)
  int64_t hidden = s[2];
  const int64_t head_dim = hidden / heads;
  const int64_t width = padded_heads * head_dim;  // = hidden without padding
  int q = split_heads(b, "attn.q", b.linear("attn.q", x, width), padded_heads, head_dim);
  int k = split_heads(b, "attn.k", b.linear("attn.k", x, width), padded_heads, head_dim);
  int v = split_heads(b, "attn.v", b.linear("attn.v", x, width), padded_heads, head_dim);
  int ctx;  // (b, heads, s, head_dim)
  if (flash) {
    ctx = b.attention("attn.core", q, k, v, causal);
  } else {
    int scores = b.matmul("attn.scores", q, k, /*transpose_b=*/true, causal);  // (b, heads, s, s)
    int probs = b.dropout("attn.probs_dropout", b.softmax("attn.softmax", scores));
    ctx = b.matmul("attn.context", probs, v);
  }
  int merged = b.transpose("attn.merge_heads", ctx, {0, 2, 1, 3});
  int flat = b.reshape("attn.merge", merged, {s[0], s[1], width});
  return b.linear("attn.proj", flat, hidden);
}

int grouped_query_attention(GraphBuilder& b, int x, int64_t heads, int64_t kv_heads, int64_t padded_heads,
                            int64_t padded_kv_heads, bool flash) {
  const int64_t hidden = b.shape(x)[2];
  return grouped_query_attention(b, x, {heads, kv_heads, padded_heads, padded_kv_heads, hidden / heads, false}, flash);
}

int grouped_query_attention(GraphBuilder& b, int x, const GqaShape& a, bool flash) {
  Shape s = b.shape(x);  // (batch, seq, hidden)
  const int64_t hidden = s[2];
  const int64_t head_dim = a.head_dim;
  const int64_t padded_heads = a.padded_heads, padded_kv_heads = a.padded_kv_heads;
  const int64_t width = padded_heads * head_dim, kv_width = padded_kv_heads * head_dim;
  int q = split_heads(b, "attn.q", b.linear("attn.q", x, width, a.bias), padded_heads, head_dim);
  int k = split_heads(b, "attn.k", b.linear("attn.k", x, kv_width, a.bias), padded_kv_heads, head_dim);
  int v = split_heads(b, "attn.v", b.linear("attn.v", x, kv_width, a.bias), padded_kv_heads, head_dim);
  int ctx;
  if (flash) {
    ctx = b.attention("attn.core", q, k, v, /*causal=*/true);
  } else {
    // The eager path materializes each K/V head once per query head of its group (repeat_kv).
    // Concat ops hold at most kMaxOpInputs operands: repeat by doubling, then one at a time.
    auto repeat = [&](int t, const std::string& name) {
      const int64_t group = padded_heads / padded_kv_heads;
      int out = t, step = 0;
      int64_t have = 1;
      for (; have * 2 <= group; have *= 2) out = b.concat(name + std::to_string(step++), {out, out}, 1);
      for (; have < group; ++have) out = b.concat(name + std::to_string(step++), {out, t}, 1);
      return out;
    };
    if (padded_kv_heads != padded_heads) {
      k = repeat(k, "attn.k.repeat");
      v = repeat(v, "attn.v.repeat");
    }
    int scores = b.matmul("attn.scores", q, k, /*transpose_b=*/true, /*causal=*/true);
    ctx = b.matmul("attn.context", b.softmax("attn.softmax", scores), v);
  }
  int merged = b.transpose("attn.merge_heads", ctx, {0, 2, 1, 3});
  int flat = b.reshape("attn.merge", merged, {s[0], s[1], width});
  return b.linear("attn.proj", flat, hidden, a.bias);
}

int latent_attention(GraphBuilder& b, int x, const MlaShape& a, bool flash) {
  Shape s = b.shape(x);  // (batch, seq, hidden)
  const int64_t hidden = s[2], heads = a.padded_heads;
  const int64_t qk_dim = a.nope_dim + a.rope_dim;
  // Queries through a low-rank bottleneck (q_lora_rank) with an RMSNorm; no-PE and rotary parts
  // in one up-projection.
  int q_low = b.rms_norm("attn.q_a_norm", b.linear("attn.q_a", x, a.q_rank, /*bias=*/false));
  int q = split_heads(b, "attn.q", b.linear("attn.q_b", q_low, heads * qk_dim, false), heads, qk_dim);
  // Keys and values from one compressed latent (kv_lora_rank), normed; the rotary key part is
  // one head shared by all heads, broadcast to each before the concat (Megatron-Core expands it
  // the same way).
  int kv_low = b.rms_norm("attn.kv_a_norm", b.linear("attn.kv_a", x, a.kv_rank, false));
  int k_rope = b.reshape("attn.k_rope.split", b.linear("attn.k_rope", x, a.rope_dim, false), {s[0], s[1], 1, a.rope_dim});
  int rep = k_rope, step = 0;
  int64_t have = 1;
  for (; have * 2 <= heads; have *= 2) rep = b.concat("attn.k_rope.expand" + std::to_string(step++), {rep, rep}, 2);
  for (; have < heads; ++have) rep = b.concat("attn.k_rope.expand" + std::to_string(step++), {rep, k_rope}, 2);
  int k_nope = b.reshape("attn.k_nope.split", b.linear("attn.k_b", kv_low, heads * a.nope_dim, false),
                         {s[0], s[1], heads, a.nope_dim});
  int k = b.transpose("attn.k.heads", b.concat("attn.k", {k_nope, rep}, 3), {0, 2, 1, 3});
  int v = split_heads(b, "attn.v", b.linear("attn.v_b", kv_low, heads * a.v_dim, false), heads, a.v_dim);
  int ctx;
  if (flash) {
    ctx = b.attention("attn.core", q, k, v, /*causal=*/true);
  } else {
    int scores = b.matmul("attn.scores", q, k, /*transpose_b=*/true, /*causal=*/true);
    ctx = b.matmul("attn.context", b.softmax("attn.softmax", scores), v);
  }
  int merged = b.transpose("attn.merge_heads", ctx, {0, 2, 1, 3});
  int flat = b.reshape("attn.merge", merged, {s[0], s[1], heads * a.v_dim});
  return b.linear("attn.proj", flat, hidden, false);
}

}  // namespace autoddl::costmodel::zoo
