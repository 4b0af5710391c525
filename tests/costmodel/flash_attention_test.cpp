// The fused attention op (FlashAttention-2): the FLOPs of Q·Kᵀ and P·V (half of them when
// causal, as the kernel skips masked tiles), 2.5x that in backward, and no s×s tensor read or
// written, so GPT with flash=1 has the unfused model's matmul FLOPs, less attention time and
// memory traffic.
#include <catch2/catch.hpp>

#include <string>

#include "autoddl/costmodel/compute.hpp"
#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/zoo.hpp"

using namespace autoddl::costmodel;

namespace {
Graph gpt(int flash, const char* model = "gpt") {
  const std::string kv = std::string(model) == "llama" ? ",kv_heads=4" : "";
  return build_zoo_model(model, parse_knob_list(std::string("layers=1,hidden=1024,heads=16,seq=2048,batch=4,flash=") +
                                                std::to_string(flash) + kv));
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

TEST_CASE("fused attention runs at the preset's measured share of peak for its sequence length and tiles",
          "[costmodel][flash]") {
  // dgx-h100 carries cuDNN's fused-attention TFLOP/s at seq 2048 on FlashAttention-3's grid (8
  // sequences x 16 heads of 128 = its 2048 reference tiles of 128 query rows): forward 484/989
  // of the BF16 peak (the paper), causal backward 0.4033 (cuDNN on an H200, calib/data/h200). A GPU
  // without the tables (dgx-a100) prices the op at peak (its roofline).
  const ClusterSpec h100 = resolve_cluster("dgx-h100", 1), a100 = resolve_cluster("dgx-a100", 1);
  REQUIRE(!h100.gpu.attention_efficiency_fwd.empty());
  REQUIRE(a100.gpu.attention_efficiency_fwd.empty());
  REQUIRE(h100.gpu.attention_reference_tiles == 2048);
  auto core_of = [](const Graph& g) { return g.ops[g.find_op("layer.0.attn.core")]; };
  const Graph g = build_zoo_model("gpt", parse_knob_list("layers=1,hidden=2048,heads=16,seq=2048,batch=8,flash=1"));
  const Op core = core_of(g);
  const OpTimes t = op_kernel_times(h100.gpu, g, core, 1.0);
  const double peak = h100.gpu.peak_flops(DType::fp16), launch = h100.gpu.launch_overhead_s;
  CHECK(t.fwd_s == Approx(core.work.fwd_flops / (peak * 484.0 / 989) + launch).epsilon(0.01));
  CHECK(t.bwd_s == Approx(core.work.bwd_flops / (peak * 0.4033) + 2 * launch).epsilon(0.01));
  const OpTimes roof = op_kernel_times(a100.gpu, g, core, 1.0);
  CHECK(roof.fwd_s == Approx(core.work.fwd_flops / a100.gpu.peak_flops(DType::fp16) + a100.gpu.launch_overhead_s));

  // One sequence instead of eight: 256 tiles, under two waves on 132 SMs, so the kernel's tail
  // weighs more: w/(w+c) of the reference's, w = tiles / SMs, c = attention_tail_waves.
  const Graph g1 = build_zoo_model("gpt", parse_knob_list("layers=1,hidden=2048,heads=16,seq=2048,batch=1,flash=1"));
  const Op core1 = core_of(g1);
  const double c = h100.gpu.attention_tail_waves, w = 256.0 / 132, w_ref = 2048.0 / 132;
  const double occupancy = (w / (w + c)) / (w_ref / (w_ref + c));
  CHECK(occupancy < 0.85);
  CHECK(op_kernel_times(h100.gpu, g1, core1, 1.0).fwd_s ==
        Approx(core1.work.fwd_flops / (peak * 484.0 / 989 * occupancy) + launch).epsilon(0.01));
  // Half of it on each of two tensor-parallel ranks (share 1/2) has half the tiles again.
  CHECK(attention_occupancy(h100.gpu, g1.tensors[core1.inputs[0]].shape, 0.5) < occupancy);
  // Non-causal attention (BERT) takes the unmasked backward table: 465/989 at seq 2048.
  const Graph bert = build_zoo_model("bert", parse_knob_list("layers=1,hidden=2048,heads=16,seq=2048,batch=8,flash=1"));
  const Op bcore = core_of(bert);
  CHECK(op_kernel_times(h100.gpu, bert, bcore, 1.0).bwd_s == Approx(bcore.work.bwd_flops / (peak * 465.0 / 989) + 2 * launch).epsilon(0.01));
  // At equal tiles longer sequences run closer to peak: seq 4096 (4 sequences) beats 2048 per FLOP.
  const Graph g4 = build_zoo_model("gpt", parse_knob_list("layers=1,hidden=2048,heads=16,seq=4096,batch=4,flash=1"));
  const Op core4 = core_of(g4);
  CHECK(op_kernel_times(h100.gpu, g4, core4, 1.0).fwd_s / core4.work.fwd_flops < t.fwd_s / core.work.fwd_flops);
}

TEST_CASE("model FLOPs are the workload's: the same with and without FlashAttention, in two named conventions",
          "[costmodel][flash]") {
  // GPT-3 175B reported 7.353e14 FLOPs per sample with flash=0 and 7.251e14 with flash=1: the
  // causal half was applied by the fused op only. Megatron-LM's convention counts the whole
  // s×s score matrix (num_floating_point_operations); the causal one half of it, for both.
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  for (const char* model : {"gpt", "llama", "bert"}) {
    INFO(model);
    const Graph plain = gpt(0, model), fused = gpt(1, model);
    const double b = 4, a = 16, s = 2048, d = 64, core = 4 * b * a * s * s * d;  // Q·Kᵀ and P·V, unmasked
    const bool causal = std::string(model) != "bert";
    for (FlopsConvention conv : {FlopsConvention::megatron, FlopsConvention::causal}) {
      CHECK(fused.model_forward_flops(conv) == Approx(plain.model_forward_flops(conv)).epsilon(1e-12));
    }
    CHECK(plain.model_forward_flops(FlopsConvention::megatron) - plain.model_forward_flops(FlopsConvention::causal) ==
          Approx(causal ? core / 2 : 0).margin(1));
    // What the kernels run still differs: the causal fused kernel skips the masked tiles.
    const double unfused_core = plain.ops[plain.find_op("layer.0.attn.scores")].work.fwd_flops +
                                plain.ops[plain.find_op("layer.0.attn.context")].work.fwd_flops;
    CHECK(unfused_core - fused.ops[fused.find_op("layer.0.attn.core")].work.fwd_flops == Approx(causal ? core / 2 : 0).margin(1));
    const char* spec = "megatron:tp=2,pp=1,dp=4";
    const Scheme dp_plain = make_scheme(spec, plain, c, {}), dp_fused = make_scheme(spec, fused, c, {});
    const CostReport rp = evaluate(plain, c, dp_plain), rf = evaluate(fused, c, dp_fused);
    CHECK(rf.model_flops_per_iteration == Approx(rp.model_flops_per_iteration).epsilon(1e-12));
    CHECK(rf.model_flops_causal_per_iteration == Approx(rp.model_flops_causal_per_iteration).epsilon(1e-12));
    CHECK(rp.model_flops_per_iteration == Approx(3 * plain.model_forward_flops(FlopsConvention::megatron)));
  }
}
