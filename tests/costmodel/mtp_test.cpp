// Multi-token prediction (the MoE zoo's knob mtp=N; DeepSeek-V3 technical report §2.2, Megatron-
// Core's MultiTokenPredictionBlock): the parameters one depth adds, its FLOPs, where a pipeline
// puts it (layout's m, or the last stage of the even split), NVIDIA's DeepSeek-V3 recipe layout
// with its MTP layer, the refusals, and the Megatron exports' MTP setting.
#include <catch2/catch.hpp>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/op_registry.hpp"
#include "autoddl/costmodel/pipeline_layout.hpp"
#include "autoddl/costmodel/scheme_export.hpp"
#include "autoddl/costmodel/stage_memory.hpp"
#include "autoddl/costmodel/zoo.hpp"
#include "input_error.hpp"

using namespace autoddl::costmodel;

namespace {

// Parameters whose name starts with `prefix`.
double params_named(const Graph& g, const std::string& prefix) {
  double n = 0;
  for (const Tensor& t : g.tensors) {
    if (t.role == TensorRole::parameter && t.name.rfind(prefix, 0) == 0) n += static_cast<double>(t.elements());
  }
  return n;
}

int chunk_of(const Graph& g, const Scheme& s, const std::string& op) {
  const int i = g.find_op(op);
  REQUIRE(i >= 0);
  return s.op_chunk[static_cast<size_t>(i)];
}

const char* kRecipe = "megatron:tp=2,pp=8,dp=64,ep=64,etp=1,mb=1,sp=1,dist_opt=1,layout=Et|(tt|)*30mL,"
                      "recompute_modules=mla_up_proj+mlp";

}  // namespace

TEST_CASE("mtp=0 leaves DeepSeek-V3 as it was and mtp=1 adds one MTP depth's own parameters", "[zoo][moe][mtp]") {
  const Graph plain = build_zoo_model("deepseek-v3", {});
  const Graph off = build_zoo_model("deepseek-v3", {{"mtp", "0"}});
  CHECK(off.ops.size() == plain.ops.size());
  CHECK(off.parameter_count() == plain.parameter_count());
  CHECK(mtp_depths(plain) == 0);
  const Graph g = build_zoo_model("deepseek-v3", {{"mtp", "1"}});
  CHECK(mtp_depths(g) == 1);
  // The depth's own parameters (DeepSeek-V3 report §2.2, the HF checkpoint's model.layers.61):
  // eh_proj M_1 (2h -> h, no bias), the enorm, hnorm and final RMSNorms, and one decoder layer
  // like the main model's last (MLA, 256 routed + 1 shared experts). The embedding and output
  // head are the main model's (shared): the same tensors, counted once.
  const double h = 7168, vocab = 129280;
  const double added = static_cast<double>(g.parameter_count() - plain.parameter_count());
  CHECK(added == params_named(g, "mtp.0."));
  CHECK(added == params_named(plain, "layer.60.") + 2 * h * h + 3 * h);
  CHECK(added == 11'610'067'968.0);
  CHECK(g.find_tensor("mtp.0.embed.weight") < 0);
  int embedding_reads = 0, head_reads = 0;
  for (const Op& op : g.ops) {
    for (int t : op.inputs) {
      embedding_reads += g.tensors[t].name == "embeddings.token" ? 1 : 0;
      head_reads += g.tensors[t].name == "lm_head.weight" ? 1 : 0;
    }
  }
  CHECK(embedding_reads == 2);
  CHECK(head_reads == 2);
  // The published figures count the checkpoint's own copy of the embedding and head in the MTP
  // module: "685B ... includes 671B of the Main Model weights and 14B of the Multi-Token
  // Prediction (MTP) Module weights" (huggingface.co/deepseek-ai/DeepSeek-V3, README). Here:
  // 671.03 B + 11.61 B + 2 x 0.93 B = 684.49 B (the checkpoint's FP8 block scales, ~0.04 B, are
  // not parameters), and 13.46 B for the module with the copies (14 B = 685 - 671 of rounded
  // figures).
  const double with_copies = added + 2 * vocab * h;
  CHECK(with_copies / 1e9 == Approx(13.46).margin(0.005));
  CHECK((static_cast<double>(g.parameter_count()) + 2 * vocab * h) / 1e9 == Approx(685).epsilon(0.01));
  // Per token the depth adds its attention, router, shared expert, 8 of 256 routed experts, the
  // projection and norms: 0.688 B.
  CHECK((active_parameter_count(g) - active_parameter_count(plain)) / 1e9 == Approx(0.688).margin(0.001));
}

TEST_CASE("an MTP depth's FLOPs are its projection and decoder layer and the shared head once more", "[zoo][moe][mtp]") {
  const auto knobs = [](const char* layers, const char* mtp) {
    return std::map<std::string, std::string>{{"layers", layers}, {"seq", "256"}, {"batch", "2"}, {"mtp", mtp}};
  };
  const auto flops = [](const Graph& g) { return g.model_forward_flops(FlopsConvention::megatron); };
  const Graph plain = build_zoo_model("deepseek-v3", knobs("4", "0"));
  const Graph g = build_zoo_model("deepseek-v3", knobs("4", "2"));
  CHECK(mtp_depths(g) == 2);
  const Op& eh = g.ops[static_cast<size_t>(g.find_op("mtp.1.eh_proj"))];
  CHECK(eh.work.fwd_flops == 2.0 * 2 * 256 * (2 * 7168) * 7168);
  // Megatron-LM's num_floating_point_operations counts the MTP layers, eh_proj and one more
  // logit GEMM per depth (training.py: "MTP norms and proj", "(mtp_num_layers + 1)  # MTP +
  // final logit"), so the model FLOPs (and MFU) include them: per depth, one more MoE layer (the
  // fifth layer's FLOPs), eh_proj and the head's.
  const double moe_layer = flops(build_zoo_model("deepseek-v3", knobs("5", "0"))) - flops(plain);
  const double head = plain.ops[static_cast<size_t>(plain.find_op("lm_head"))].work.fwd_flops;
  CHECK(flops(g) - flops(plain) == Approx(2 * (moe_layer + eh.work.fwd_flops + head)).epsilon(1e-12));
}

TEST_CASE("the mtp knob is refused past the decoder layers", "[zoo][moe][mtp][bad-input]") {
  CHECK_INPUT_ERROR(build_zoo_model("deepseek-v3", {{"layers", "4"}, {"mtp", "5"}}), "mtp", "must be at most layers = 4");
  CHECK_INPUT_ERROR(build_zoo_model("deepseek-v3", {{"mtp", "-1"}}), "mtp", "at least 0");
}

TEST_CASE("NVIDIA's DeepSeek-V3 recipe layout with its MTP layer fits on 1024 H100", "[costmodel][pipeline-layout][mtp]") {
  // Megatron-Bridge v0.6.0's perf_recipes/deepseek/h100/deepseek_v3.py (one MTP layer, the
  // DeepSeek-V3 default; global batch 16384): the MTP layer with the loss in the last virtual stage.
  const ClusterSpec c = resolve_cluster("dgx-h100", 128);
  const Graph g = build_zoo_model("deepseek-v3", parse_knob_list("batch=16384,mtp=1"));
  const Scheme s = make_scheme(kRecipe, g, c, {});
  CHECK(s.stages() == 8);
  CHECK(s.virtual_stages == 4);
  CHECK(chunk_of(g, s, "embeddings.token_lookup") == 0);
  CHECK(chunk_of(g, s, "layer.60.ffn.residual") == 30);
  CHECK(chunk_of(g, s, "norm_f") == 30);  // with the last decoder layer, as Megatron-Core builds it
  CHECK(chunk_of(g, s, "mtp.0.embed") == 31);
  CHECK(chunk_of(g, s, "mtp.0.final_norm") == 31);
  CHECK(chunk_of(g, s, "lm_head") == 31);
  CHECK(chunk_of(g, s, "lm_head.mtp.0") == 31);
  CHECK(chunk_of(g, s, "loss.mtp.0") == 31);
  CHECK(layout_of_op_chunks(g, s.op_chunk, 32) == "Et|(tt|)*30mL");
  const CostReport r = evaluate(g, c, s);
  CHECK(r.feasible);
  // Against the same recipe without MTP: slower (one more MoE layer, projection and head on the
  // last stage) and the last stage holds more.
  const Graph plain = build_zoo_model("deepseek-v3", parse_knob_list("batch=16384"));
  const std::string no_mtp = std::string(kRecipe).replace(std::string(kRecipe).find("mL"), 2, "L");
  const Scheme ps = make_scheme(no_mtp, plain, c, {});
  const CostReport p = evaluate(plain, c, ps);
  REQUIRE(p.feasible);
  CHECK(r.iteration_s > p.iteration_s);
  CHECK(r.model_flops_per_iteration > p.model_flops_per_iteration);
  // Memory: the MTP layer's weights (with the embedding's second copy, as Megatron-Core builds
  // one on the MTP stage) and activations on the last rank; the other ranks unchanged.
  const MemoryPhase m = stage_memory(g, s, make_eval_frame(g, c, s));
  const MemoryPhase pm = stage_memory(plain, ps, make_eval_frame(plain, c, ps));
  REQUIRE(m.stage_param_bytes.size() == 8);
  CHECK(m.stage_param_bytes.back() > pm.stage_param_bytes.back());
  CHECK(m.stage_activation_bytes.back() > pm.stage_activation_bytes.back());
  for (size_t k = 0; k < 6; ++k) {
    CHECK(m.stage_param_bytes[k] == Approx(pm.stage_param_bytes[k]).epsilon(1e-12));
    CHECK(m.stage_activation_bytes[k] == Approx(pm.stage_activation_bytes[k]).epsilon(1e-12));
  }
  // Rank 6 (counting from 0; chunk 30 is its last virtual stage) gains only the final norm, which
  // stays with the last decoder layer instead of going with the loss (7168 weights: ~44 kB).
  CHECK(m.stage_param_bytes[6] > pm.stage_param_bytes[6]);
  CHECK(m.stage_param_bytes[6] - pm.stage_param_bytes[6] < 1e5);
  CHECK(m.stage_activation_bytes[6] - pm.stage_activation_bytes[6] < 1e-2 * pm.stage_activation_bytes[6]);
}

TEST_CASE("a layout whose m's do not match the model's MTP depths is refused", "[costmodel][pipeline-layout][mtp][bad-input]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 1);
  const Graph g = build_zoo_model("deepseek-v3", parse_knob_list("layers=6,dense_layers=1,experts=16,batch=8,mtp=1"));
  const Graph plain = build_zoo_model("deepseek-v3", parse_knob_list("layers=6,dense_layers=1,experts=16,batch=8"));
  const std::string base = "megatron:tp=2,pp=4,dp=1,sp=1,layout=";
  CHECK_INPUT_ERROR(make_scheme(base + "Et|tt|tt|tL", g, c, {}), "layout",
                    "places 0 multi-token-prediction layers (m) but deepseek-v3 has 1");
  CHECK_INPUT_ERROR(make_scheme(base + "Et|tt|tt|tmL", plain, c, {}), "layout",
                    "places 1 multi-token-prediction layers (m) but deepseek-v3 has 0 (set the model's knob mtp=N");
  CHECK_INPUT_ERROR(make_scheme(base + "Et|tt|tm|ttL", g, c, {}), "layout", "a decoder layer (t) follows");
  const Graph two = build_zoo_model("deepseek-v3", parse_knob_list("layers=6,dense_layers=1,experts=16,batch=8,mtp=2"));
  CHECK_INPUT_ERROR(make_scheme(base + "Ett|tt|ttm|mL", two, c, {}), "layout", "all in one stage");
  // With interleaving, the m's must be in a rank's last virtual stage (stage 4 of 8 is rank 4's first).
  CHECK_INPUT_ERROR(make_scheme("megatron:tp=2,pp=4,dp=1,sp=1,layout=Et|tt|tt|tm||||L", g, c, {}), "layout",
                    "stage 4, virtual stage 1 of 2 on pipeline rank 4");
}

TEST_CASE("without a layout the MTP layer goes on the last pipeline stage as Megatron-Core puts it", "[costmodel][pipeline-layout][mtp]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 1);
  const Graph g = build_zoo_model("deepseek-v3", parse_knob_list("layers=8,dense_layers=1,experts=16,batch=8,mtp=1"));
  // The 8 decoder layers split evenly, the MTP layer on top of the last stage's.
  const Scheme s = make_scheme("megatron:tp=2,pp=4,dp=1,sp=1", g, c, {});
  CHECK(layout_of_op_chunks(g, s.op_chunk, 4) == "Ett|tt|tt|ttmL");
  CHECK(chunk_of(g, s, "mtp.0.eh_proj") == 3);
  CHECK(evaluate(g, c, s).feasible);
  // Interleaved: on the last virtual stage of the last rank.
  const Scheme v = make_scheme("megatron:tp=2,pp=4,dp=1,sp=1,interleave=2", g, c, {});
  CHECK(chunk_of(g, v, "mtp.0.eh_proj") == 7);
  CHECK(layout_of_op_chunks(g, v.op_chunk, 8) == "Et|(t|)*6tmL");
  // The even split's refusal suggests a layout with the m (balanced by work: the MTP layer, the
  // LM head and the loss fill the last stage), and that layout runs.
  const Graph odd = build_zoo_model("deepseek-v3", parse_knob_list("layers=7,dense_layers=1,experts=16,batch=8,mtp=1"));
  CHECK_INPUT_ERROR(make_scheme("megatron:tp=2,pp=4,dp=1,sp=1", odd, c, {}), "pp", "7 layers do not split evenly");
  CHECK_INPUT_ERROR(make_scheme("megatron:tp=2,pp=4,dp=1,sp=1", odd, c, {}), "pp", "layout=Ett|tt|t*3|mL");
  const Scheme suggested = make_scheme("megatron:tp=2,pp=4,dp=1,sp=1,layout=Ett|tt|t*3|mL", odd, c, {});
  CHECK(chunk_of(odd, suggested, "mtp.0.eh_proj") == 3);
}

TEST_CASE("the Megatron exports carry the MTP depths and the layout", "[costmodel][export][mtp]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 128);
  const Graph g = build_zoo_model("deepseek-v3", parse_knob_list("batch=16384,mtp=1"));
  const Scheme s = make_scheme(kRecipe, g, c, {});
  const std::string lm = export_scheme(find_export_format("megatron-lm"), g, c, s);
  CHECK_THAT(lm, Catch::Contains("--mtp-num-layers 1\n"));
  CHECK_THAT(lm, Catch::Contains("--pipeline-model-parallel-layout \"Et|(tt|)*30mL\"\n"));
  const std::string bridge = export_scheme(find_export_format("megatron-bridge"), g, c, s);
  CHECK_THAT(bridge, Catch::Contains("cfg.model.mtp_num_layers = 1\n"));
  CHECK_THAT(bridge, Catch::Contains("cfg.model.pipeline_model_parallel_layout = \"Et|(tt|)*30mL\"\n"));
  // Without MTP the Bridge export turns the DeepSeek-V3 recipe's MTP layer off; Megatron-LM's is off by default.
  const Graph plain = build_zoo_model("deepseek-v3", parse_knob_list("batch=16384"));
  const Scheme p = make_scheme("megatron:tp=2,pp=8,dp=64,ep=64,etp=1,mb=1,sp=1,dist_opt=1,layout=Et|(tt|)*30L,"
                               "recompute_modules=mla_up_proj+mlp", plain, c, {});
  CHECK_THAT(export_scheme(find_export_format("megatron-bridge"), plain, c, p),
             Catch::Contains("cfg.model.mtp_num_layers = None\n"));
  CHECK_THAT(export_scheme(find_export_format("megatron-lm"), plain, c, p), !Catch::Contains("--mtp-num-layers"));
}
