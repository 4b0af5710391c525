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

#define CHECK_INPUT_ERROR(expr, field_, part)               \
  do {                                                      \
    const auto err = input_error_of([&] { (void)(expr); }); \
    REQUIRE(err);                                           \
    CHECK(err->field() == (field_));                        \
    CHECK_THAT(err->reason(), Catch::Contains(part));       \
  } while (0)

namespace {

// Parameters whose name starts with `prefix`.
double params_named(const Graph& g, const std::string& prefix) {
  double n = 0;
  for (const Tensor& t : g.tensors) {
    if (t.role == TensorRole::parameter && t.name.rfind(prefix, 0) == 0) n += static_cast<double>(t.elements());
  }
  return n;
}

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
