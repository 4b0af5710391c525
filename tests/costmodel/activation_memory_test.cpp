// Activation memory per transformer layer against Korthikanti et al. 2022, "Reducing Activation
// Recomputation in Large Transformer Models" (§4.1, Table 2), measured the way a reader would
// check it: the activation bytes of a GPT with L+1 layers minus those with L layers, one
// micro-batch in flight, 16-bit activations. With s = seq, b = micro-batch per device,
// h = hidden, a = heads, t = tensor-parallel size, the paper's bytes per layer are
//   none:      s·b·h·(10 + 24/t) + 5·a·s²·b/t       with sp: s·b·h·34/t + 5·a·s²·b/t
//   selective: s·b·h·(10 + 24/t)                    with sp: s·b·h·34/t
//   full:      2·s·b·h                              with sp: 2·s·b·h/t
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "autoddl/costmodel/activation_memory.hpp"
#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/zoo.hpp"

using namespace autoddl::costmodel;

namespace {

constexpr int64_t kSeq = 1024, kHidden = 2048, kHeads = 16, kBatch = 8;

Graph gpt(int64_t layers, int flash = 0, int64_t heads = kHeads, int64_t hidden = kHidden) {
  return build_zoo_model("gpt", parse_knob_list("layers=" + std::to_string(layers) + ",hidden=" + std::to_string(hidden) +
                                                ",heads=" + std::to_string(heads) + ",seq=" + std::to_string(kSeq) +
                                                ",vocab=51200,batch=" + std::to_string(kBatch) + ",dtype=fp16,flash=" +
                                                std::to_string(flash)));
}

// Activation bytes one more layer adds on one device of dgx-a100 (8 GPUs: tp·dp = 8).
double per_layer_bytes(int tp, bool sp, const std::string& recompute, int flash = 0, int64_t heads = kHeads,
                       int64_t hidden = kHidden) {
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const int dp = 8 / tp;
  const std::string spec = "megatron:tp=" + std::to_string(tp) + ",pp=1,dp=" + std::to_string(dp) +
                           ",mb=" + std::to_string(kBatch / dp) + ",sp=" + (sp ? "1" : "0") +
                           ",recompute=" + recompute;
  const Graph g2 = gpt(2, flash, heads, hidden), g3 = gpt(3, flash, heads, hidden);
  const CostReport r2 = evaluate(g2, c, make_scheme(spec, g2, c, {}));
  const CostReport r3 = evaluate(g3, c, make_scheme(spec, g3, c, {}));
  REQUIRE(r2.micro_batches == 1);
  return r3.activation_memory_bytes - r2.activation_memory_bytes;
}

double korthikanti(int tp, bool sp, const std::string& recompute) {
  const double t = tp, s = kSeq, h = kHidden, a = kHeads, b = kBatch / (8.0 / tp);
  const double sbh = s * b * h;
  if (recompute == "full") return 2 * sbh / (sp ? t : 1);
  const double linear = sp ? 34 * sbh / t : sbh * (10 + 24 / t);
  const double attention = recompute == "none" ? 5 * a * s * s * b / t : 0;
  return linear + attention;
}

}  // namespace

TEST_CASE("per-layer activation bytes match Korthikanti et al. 2022 within 5%", "[costmodel][memory]") {
  for (const char* recompute : {"none", "selective", "full"}) {
    for (int tp : {1, 8}) {
      for (bool sp : {false, true}) {
        if (sp && tp == 1) continue;  // sequence parallelism splits over the tensor-parallel group
        INFO("recompute=" << recompute << " tp=" << tp << " sp=" << sp);
        const double want = korthikanti(tp, sp, recompute);
        CHECK(per_layer_bytes(tp, sp, recompute) == Approx(want).epsilon(0.05));
      }
    }
  }
}

TEST_CASE("views, bias and residual adds keep nothing, dropout keeps a 1-byte mask", "[costmodel][memory]") {
  const Graph g = gpt(1);
  const std::vector<double> f = saved_factors(g);
  auto factor_of = [&](const std::string& op) {
    const int i = g.find_op(op);
    REQUIRE(i >= 0);
    return f[g.ops[i].outputs[0]];
  };
  CHECK(factor_of("layer.0.attn.q.add_bias") == 0);     // read only by a reshape (a view)
  CHECK(factor_of("layer.0.attn.q.split") == 0);        // a view read by a view
  CHECK(factor_of("layer.0.attn.q.heads") == 1);        // Q, kept for the scores' backward
  CHECK(factor_of("layer.0.attn.residual") == 1);       // kept because ln2 keeps its input
  CHECK(factor_of("layer.0.attn.dropout") == Approx(0.5));        // fp16: its 1-byte mask only
  CHECK(factor_of("layer.0.attn.probs_dropout") == Approx(1.5));  // kept for ·V, plus its mask
  CHECK(factor_of("layer.0.attn.softmax") == 1);        // softmax keeps its output
  CHECK(factor_of("layer.0.attn.context") == 0);        // read by a transpose
  CHECK(factor_of("layer.0.ffn.fc1.add_bias") == 1);    // GeLU's input
  CHECK(factor_of("layer.0.ffn.gelu") == 1);            // fc2's input
  CHECK(factor_of("lm_head") == 2);                     // fp16 logits kept in fp32 for the loss
}

TEST_CASE("GPT-3 175B with interleaved 1F1B, sp and selective recompute fits on 80 GB A100s",
          "[costmodel][memory]") {
  // Issue 14's command: 34·s·b·h/t bytes per layer over L layers, times 1 + (p−1)/(p·v) in
  // flight on the first stage (Korthikanti et al. 2022, §4.2.3): about 12.4 GiB.
  const ClusterSpec c = resolve_cluster("dgx-a100", 8);
  const Graph g = build_zoo_model("gpt", parse_knob_list("layers=96,hidden=12288,heads=96,seq=2048,vocab=51200,batch=64"));
  const CostReport r = evaluate(g, c, make_scheme("megatron:tp=8,pp=8,dp=1,mb=1,interleave=3,sp=1,recompute=selective", g, c, {}));
  const double p = 8, v = 3, L = 96;
  const double want = 34.0 * 2048 * 1 * 12288 / 8 * L * (1 + (p - 1) / (p * v));
  CHECK(r.activation_memory_bytes == Approx(want).epsilon(0.05));
  CHECK(r.feasible);
}

TEST_CASE("FlashAttention keeps no s x s tensor: a layer holds what selective recompute keeps", "[costmodel][memory]") {
  for (int tp : {1, 8}) {
    for (bool sp : {false, true}) {
      if (sp && tp == 1) continue;
      INFO("tp=" << tp << " sp=" << sp);
      CHECK(per_layer_bytes(tp, sp, "none", /*flash=*/1) == Approx(korthikanti(tp, sp, "selective")).epsilon(0.05));
    }
  }
}

TEST_CASE("selective recompute finds the attention core by kind: heads == head_dim keeps Q, K, V and the output",
          "[costmodel][memory]") {
  // 64 heads of 64 (hidden 4096): the (batch, seq, heads, head_dim) views of Q, K, V and the
  // attention output have two equal trailing sizes, which a shape test took for score matrices,
  // dropping 8·sbh/t of what backward needs. Selective keeps s·b·h·(10 + 24/t) whatever the heads.
  for (int tp : {1, 8}) {
    for (bool sp : {false, true}) {
      if (sp && tp == 1) continue;
      INFO("tp=" << tp << " sp=" << sp);
      const double square = per_layer_bytes(tp, sp, "selective", 0, /*heads=*/64, /*hidden=*/4096);
      CHECK(square == Approx(per_layer_bytes(tp, sp, "selective", 0, /*heads=*/32, /*hidden=*/4096)));
      const double t = tp, sbh = kSeq * (kBatch / (8.0 / tp)) * 4096.0;
      CHECK(square == Approx(sp ? 34 * sbh / t : sbh * (10 + 24 / t)).epsilon(0.05));
      // FlashAttention stores no s x s tensor, so selective recompute has nothing to drop.
      CHECK(per_layer_bytes(tp, sp, "selective", 1, 64, 4096) == Approx(per_layer_bytes(tp, sp, "none", 1, 64, 4096)));
    }
  }
}

TEST_CASE("the attention core is the score product, softmax, dropout and the product with V, or the fused op",
          "[costmodel][memory]") {
  for (int flash : {0, 1}) {
    const Graph g = gpt(1, flash, /*heads=*/64, /*hidden=*/4096);
    std::vector<std::string> core;
    for (const Op& op : g.ops) {
      if (op.attention_core) core.push_back(op.name);
    }
    INFO("flash=" << flash);
    if (flash) {
      CHECK(core == std::vector<std::string>{"layer.0.attn.core"});
    } else {
      CHECK(core == std::vector<std::string>{"layer.0.attn.scores", "layer.0.attn.softmax",
                                             "layer.0.attn.probs_dropout", "layer.0.attn.context"});
    }
  }
}

TEST_CASE("a Llama layer keeps what Megatron-Core with Transformer Engine saves, in bf16 and FP8",
          "[costmodel][memory]") {
  // Llama 3 70B's layer (GQA 64/8 heads, SwiGLU 28672) with FlashAttention, sp and no dropout,
  // tp 4, counted per tensor in bytes per s·b·h/t elements (r = kv_heads/heads, f = ffn/h):
  //   the two norm inputs (residual stream, sequence-split)        4
  //   the two norm outputs, kept split (re-gathered in backward)   4, or 2 as FP8 copies
  //   Q; K and V at the GQA ratio                                  2 + 4r
  //   the attention output o                                       2 (the projection's input is a
  //                                                                view of it), or 2 + an FP8 copy 1
  //   FC1's gate and up outputs (the fused SwiGLU's input)         4f
  //   the SwiGLU output (FC2's input)                              2f, or f as an FP8 copy
  // bf16: 12 + 4r + 6f = 33.5; FP8: 11 + 4r + 5f = 29 (it was 52.5 with every tensor counted in
  // bf16 and silu's output kept beside its input).
  const ClusterSpec c = resolve_cluster("dgx-h100", 1);
  auto layer_bytes = [&](const char* dtype) {
    auto g = [&](int layers) {
      return build_zoo_model("llama", parse_knob_list("size=3-70b,layers=" + std::to_string(layers) +
                                                      ",seq=1024,batch=8,dtype=" + dtype));
    };
    const std::string spec = "megatron:tp=4,pp=1,dp=2,mb=4,sp=1";
    const Graph g2 = g(2), g3 = g(3);
    const CostReport r2 = evaluate(g2, c, make_scheme(spec, g2, c, {}));
    const CostReport r3 = evaluate(g3, c, make_scheme(spec, g3, c, {}));
    REQUIRE(r2.micro_batches == 1);
    return r3.activation_memory_bytes - r2.activation_memory_bytes;
  };
  const double sbh_t = 1024.0 * 4 * 8192 / 4, r = 8.0 / 64, f = 28672.0 / 8192;
  CHECK(layer_bytes("bf16") == Approx(sbh_t * (12 + 4 * r + 6 * f)).epsilon(0.01));
  CHECK(layer_bytes("fp8") == Approx(sbh_t * (11 + 4 * r + 5 * f)).epsilon(0.01));
}
