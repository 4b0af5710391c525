// Megatron-Core's --recompute-modules as the megatron scheme's recompute_modules=: each module
// drops what its ops produce and re-runs them in backward; NVIDIA's DeepSeek-V3 layout on 1,024
// H100 (Megatron-Bridge v0.6.0 perf recipe: tp 2, pp 8, vp 4, ep 64, mla_up_proj + mlp) fits only
// with its modules; the set exports under Megatron's names; bad names are refused.
#include <catch2/catch.hpp>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/recompute_modules.hpp"
#include "autoddl/costmodel/scheme_export.hpp"
#include "autoddl/costmodel/scheme_json.hpp"
#include "autoddl/costmodel/zoo.hpp"
#include "input_error.hpp"

using namespace autoddl::costmodel;

TEST_CASE("recompute modules trade activation memory for recomputed forward time", "[costmodel][recompute]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 1);
  const Graph g = build_zoo_model("deepseek-v3", parse_knob_list("layers=2,dense_layers=1,experts=16,batch=8"));
  const std::string base = "megatron:tp=2,pp=1,dp=4,ep=4,etp=1,sp=1,mb=1";
  const CostReport none = evaluate(g, c, make_scheme(base, g, c, {}));
  double last_mem = none.activation_memory_bytes, last_compute = none.compute_s;
  // Each added module keeps less and recomputes more.
  for (const char* mods : {"layernorm", "layernorm+moe_act", "layernorm+moe_act+mla_up_proj",
                           "layernorm+moe_act+mla_up_proj+mlp"}) {
    INFO(mods);
    const Scheme s = make_scheme(base + ",recompute_modules=" + mods, g, c, {});
    CHECK(s.recompute == Recompute::selective);
    const CostReport r = evaluate(g, c, s);
    CHECK(r.activation_memory_bytes < last_mem);
    CHECK(r.compute_s > last_compute);
    last_mem = r.activation_memory_bytes;
    last_compute = r.compute_s;
  }
  // core_attn alone is recompute=selective.
  const CostReport core = evaluate(g, c, make_scheme(base + ",recompute_modules=core_attn", g, c, {}));
  const CostReport sel = evaluate(g, c, make_scheme(base + ",recompute=selective", g, c, {}));
  CHECK(core.iteration_s == Approx(sel.iteration_s));
  CHECK(core.activation_memory_bytes == Approx(sel.activation_memory_bytes));
}

TEST_CASE("NVIDIA's DeepSeek-V3 layout on 1024 H100 fits with its recompute modules and reports its all-to-all",
          "[costmodel][recompute][moe]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 128);
  const Graph g = build_zoo_model("deepseek-v3", parse_knob_list("batch=8192"));
  const std::string layout = "megatron:tp=2,pp=8,dp=64,ep=64,etp=1,mb=1,sp=1,dist_opt=1,layout=Et|(tt|)*30L";
  const CostReport plain = evaluate(g, c, make_scheme(layout, g, c, {}));
  CHECK_FALSE(plain.feasible);
  const Scheme s = make_scheme(layout + ",recompute_modules=mla_up_proj+mlp", g, c, {});
  const CostReport r = evaluate(g, c, s);
  CHECK(r.feasible);
  CHECK(r.all_to_all_exposed_s > 0);
  CHECK(r.all_to_all_exposed_s < r.comm_exposed_s);
  // The scheme JSON and the Megatron exports carry the modules.
  CHECK(scheme_from_json(scheme_to_json(s, g), g, c, "scheme.json").recompute_modules == s.recompute_modules);
  const std::string lm = export_scheme(find_export_format("megatron-lm"), g, c, s);
  CHECK_THAT(lm, Catch::Contains("--recompute-modules mla_up_proj mlp\n"));
  CHECK_THAT(lm, Catch::Contains("--pipeline-model-parallel-layout \"Et|(tt|)*30L\"\n"));
  const std::string bridge = export_scheme(find_export_format("megatron-bridge"), g, c, s);
  CHECK_THAT(bridge, Catch::Contains("cfg.model.recompute_modules = [\"mla_up_proj\", \"mlp\"]\n"));
}

TEST_CASE("recompute modules that are unknown or absent from the model are refused", "[costmodel][recompute][bad-input]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 1);
  const Graph llama = build_zoo_model("llama", parse_knob_list("size=3-8b,layers=2,batch=8"));
  struct Case {
    const char* spec;
    const char* reason;
  };
  for (const Case& k : {Case{"megatron:tp=8,pp=1,dp=1,sp=1,recompute_modules=attn", "unknown module 'attn'"},
                        Case{"megatron:tp=8,pp=1,dp=1,sp=1,recompute_modules=mla_up_proj", "no multi-head latent attention"},
                        Case{"megatron:tp=8,pp=1,dp=1,sp=1,recompute_modules=moe_act", "has no experts"},
                        Case{"megatron:tp=8,pp=1,dp=1,sp=1,recompute=full,recompute_modules=mlp", "needs recompute=selective"}}) {
    INFO(k.spec);
    const auto err = input_error_of([&] { make_scheme(k.spec, llama, c, {}); });
    REQUIRE(err);
    CHECK(err->field() == "recompute_modules");
    CHECK_THAT(err->reason(), Catch::Contains(k.reason));
  }
}
