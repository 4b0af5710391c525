// The fused attention op (FlashAttention-2): the FLOPs of Q·Kᵀ and P·V (half of them when
// causal, as the kernel skips masked tiles), 2.5x that in backward, and no s×s tensor read or
// written, so GPT with flash=1 has the unfused model's matmul FLOPs, less attention time and
// memory traffic.
#include <catch2/catch.hpp>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/zoo.hpp"

using namespace autoddl::costmodel;

namespace {
Graph gpt(int flash, const char* model = "gpt") {
  return build_zoo_model(model, parse_knob_list(std::string("layers=1,hidden=1024,heads=16,seq=2048,batch=4,flash=") +
                                                std::to_string(flash)));
}
}  // namespace

TEST_CASE("fused attention counts Q·Kᵀ and P·V, halved when causal", "[costmodel][flash]") {
  const Graph g = gpt(1);
  const Op& core = g.ops[g.find_op("layer.0.attn.core")];
  REQUIRE(core.kind == OpKind::attention);
  const double b = 4, a = 16, s = 2048, d = 64;
  CHECK(core.work.fwd_flops == Approx(0.5 * 4 * b * a * s * s * d));
  CHECK(core.work.bwd_flops == Approx(2.5 * core.work.fwd_flops));
  CHECK(core.work.fwd_bytes < 4 * b * s * a * d * 2 * 1.1);  // q, k, v, o (+ log-sum-exp): no s×s
  const Graph bert = gpt(1, "bert");
  CHECK(bert.ops[bert.find_op("layer.0.attn.core")].work.fwd_flops == Approx(4 * b * a * s * s * d));
  // The unfused graph's two core matmuls have the full (unmasked) FLOPs.
  const Graph plain = gpt(0);
  CHECK(plain.ops[plain.find_op("layer.0.attn.scores")].work.fwd_flops +
            plain.ops[plain.find_op("layer.0.attn.context")].work.fwd_flops ==
        Approx(4 * b * a * s * s * d));
}

TEST_CASE("flash=1 makes attention faster and splits over heads with tensor parallelism", "[costmodel][flash]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const Graph fused = gpt(1), plain = gpt(0);
  const CostReport rf = evaluate(fused, c, make_scheme("megatron:tp=8,pp=1,dp=1", fused, c, {}));
  const CostReport rp = evaluate(plain, c, make_scheme("megatron:tp=8,pp=1,dp=1", plain, c, {}));
  CHECK(rf.iteration_s < rp.iteration_s);
  CHECK(rf.activation_memory_bytes < rp.activation_memory_bytes);
  // Megatron's collectives are unchanged: the core needs none (heads are split).
  const auto ar = static_cast<size_t>(CollectiveKind::all_reduce);
  CHECK(rf.comm.count[ar] == rp.comm.count[ar]);
}
