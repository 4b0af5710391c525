// The fused attention op (FlashAttention-2): the FLOPs of Q·Kᵀ and P·V (half of them when
// causal, as the kernel skips masked tiles), 2.5x that in backward, and no s×s tensor read or
// written, so GPT with flash=1 has the unfused model's matmul FLOPs, less attention time and
// memory traffic.
#include <catch2/catch.hpp>

#include "autoddl/costmodel/compute.hpp"
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

TEST_CASE("fused attention runs at the preset's measured share of peak for its sequence length", "[costmodel][flash]") {
  // dgx-h100 carries cuDNN's fused-attention TFLOP/s from the FlashAttention-3 paper; at seq
  // 2048 the forward runs at 484/989 of the BF16 peak and the backward at 465/989, where a GPU
  // without the tables (dgx-a100) prices the op at peak (its roofline).
  const ClusterSpec h100 = resolve_cluster("dgx-h100", 1), a100 = resolve_cluster("dgx-a100", 1);
  REQUIRE(!h100.gpu.attention_efficiency_fwd.empty());
  REQUIRE(a100.gpu.attention_efficiency_fwd.empty());
  const Graph g = gpt(1);
  const Op& core = g.ops[g.find_op("layer.0.attn.core")];
  const OpTimes t = op_kernel_times(h100.gpu, g, core, 1.0);
  const double peak = h100.gpu.peak_flops(DType::fp16), launch = h100.gpu.launch_overhead_s;
  CHECK(t.fwd_s == Approx(core.work.fwd_flops / (peak * 484.0 / 989) + launch).epsilon(0.01));
  CHECK(t.bwd_s == Approx(core.work.bwd_flops / (peak * 465.0 / 989) + 2 * launch).epsilon(0.01));
  const OpTimes roof = op_kernel_times(a100.gpu, g, core, 1.0);
  CHECK(roof.fwd_s == Approx(core.work.fwd_flops / a100.gpu.peak_flops(DType::fp16) + a100.gpu.launch_overhead_s));
  // Longer sequences run the kernel closer to peak: seq 4096 is faster per FLOP than 2048.
  const Graph g4 = build_zoo_model("gpt", parse_knob_list("layers=1,hidden=1024,heads=16,seq=4096,batch=1,flash=1"));
  const Op& core4 = g4.ops[g4.find_op("layer.0.attn.core")];
  CHECK(op_kernel_times(h100.gpu, g4, core4, 1.0).fwd_s / core4.work.fwd_flops < t.fwd_s / core.work.fwd_flops);
}
