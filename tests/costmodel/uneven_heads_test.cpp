// Megatron with a tp that does not divide the attention heads: the core model refuses it, as
// Megatron-LM does; make_schemed_model (and so the CLI) costs the uneven head split by padding
// heads (heads_pad = tp), so that every rank is priced as the busiest, and reports the model as given.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/schemed_model.hpp"
#include "autoddl/costmodel/zoo.hpp"

using namespace autoddl::costmodel;

namespace {
double all_reduces(const CostReport& r) { return r.comm.count[static_cast<size_t>(CollectiveKind::all_reduce)]; }

int run(const std::string& args) {
  const int rc = std::system((std::string(AUTODDL_BINARY) + " " + args + " > /dev/null 2>&1").c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}
}  // namespace

TEST_CASE("heads_pad adds heads of the same size, so tp ranks hold ceil(heads/tp) each", "[costmodel][zoo]") {
  Graph g = build_zoo_model("gpt", {{"layers", "1"}, {"hidden", "768"}, {"heads", "12"}, {"heads_pad", "8"}});
  const Tensor& q = g.tensors[g.ops[g.find_op("layer.0.attn.q")].inputs[1]];
  CHECK(q.shape == Shape{768, 1024});  // 16 heads of 64
  const Op& scores = g.ops[g.find_op("layer.0.attn.scores")];
  CHECK(g.tensors[scores.outputs[0]].shape[1] == 16);
  Graph plain = build_zoo_model("gpt", {{"layers", "1"}, {"hidden", "768"}, {"heads", "12"}});
  // q, k, v gain 256 columns and biases, the projection 256 rows.
  CHECK(g.parameter_count() - plain.parameter_count() == 3 * (768 * 256 + 256) + 256 * 768);
  Graph bert = build_zoo_model("bert", {{"layers", "1"}, {"heads", "12"}, {"heads_pad", "8"}});
  CHECK(bert.tensors[bert.ops[bert.find_op("layer.0.attn.scores")].outputs[0]].shape[1] == 16);
}

TEST_CASE("Megatron on padded heads: still 2 forward and 2 backward all-reduces per layer", "[costmodel][megatron]") {
  ClusterSpec c = resolve_cluster("dgx-a100", 2);
  Graph twelve = build_zoo_model("gpt", {{"layers", "2"}, {"hidden", "768"}, {"heads", "12"}, {"batch", "64"}});
  CHECK_THROWS_AS(make_scheme("megatron:tp=8,pp=1,dp=2", twelve, c, {}), HeadsNotDivisible);
  for (int layers : {2, 6}) {
    Graph g = build_zoo_model("gpt", {{"layers", std::to_string(layers)}, {"hidden", "768"}, {"heads", "12"},
                                      {"heads_pad", "8"}, {"batch", "64"}});
    Scheme s = make_scheme("megatron:tp=8,pp=1,dp=2", g, c, {});
    s.bucket_bytes = 1e18;  // one gradient bucket (see the heads=16 case in cost_model_test)
    CostReport r = evaluate(g, c, s);
    CHECK(all_reduces(r) == 4 * layers + 4);
    CHECK(r.feasible);
  }
}

TEST_CASE("autoddl cost prices tp not dividing heads as the padded model and reports the model as given",
          "[costmodel][cli]") {
  const std::string dir = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/autoddl_heads_test";
  std::system(("mkdir -p " + dir).c_str());
  const std::string common = " --cluster dgx-a100 --nodes 2 --scheme megatron:tp=8,pp=1,dp=2 --top 0";
  const std::string knobs = "layers=12,hidden=768,heads=12,seq=1024,batch=64";
  REQUIRE(run("cost --model gpt --set " + knobs + common + " --json " + dir + "/auto.json") == 0);
  REQUIRE(run("cost --model gpt --set " + knobs + ",heads_pad=8" + common + " --json " + dir + "/pad.json") == 0);
  const nlohmann::json a = autoddl::read_json_file(dir + "/auto.json");
  const nlohmann::json p = autoddl::read_json_file(dir + "/pad.json");
  CHECK(a["feasible"] == true);
  CHECK(a["iteration_s"] == p["iteration_s"]);
  CHECK(a["count_by_kind"] == p["count_by_kind"]);
  CHECK(a["peak_memory_bytes"] == p["peak_memory_bytes"]);
  REQUIRE(a["notes"].size() == 1);
  CHECK(a["notes"][0].get<std::string>().find("uneven head split") != std::string::npos);
  CHECK(p["notes"].empty());
  Graph given = build_zoo_model("gpt", parse_knob_list(knobs));
  CHECK(a["params"].get<double>() == static_cast<double>(given.parameter_count()));
  CHECK(a["model_flops_per_iteration"].get<double>() == Approx(3 * given.model_forward_flops(FlopsConvention::megatron)));
  CHECK(p["params"].get<double>() > a["params"].get<double>());
  // An explicit heads_pad is the user's model: no second guess, Megatron's refusal stands.
  CHECK(run("cost --model gpt --set " + knobs + ",heads_pad=1" + common) == 2);
}

TEST_CASE("make_schemed_model pads a zoo model's heads for tp, says so, and counts the model as given",
          "[costmodel][megatron]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const std::string spec = "megatron:tp=8,pp=1,dp=2";
  const std::string knobs = "layers=2,hidden=768,heads=12,batch=64";
  const Graph given = build_zoo_model("gpt", parse_knob_list(knobs));
  const SchemedModel m = make_schemed_model(given, "gpt", knobs, spec, c, {});
  CHECK(m.note.find("uneven head split") != std::string::npos);
  CHECK(m.note.find("heads_pad=8") != std::string::npos);
  CHECK(m.params == static_cast<double>(given.parameter_count()));
  CHECK(m.forward_flops == given.model_forward_flops(FlopsConvention::megatron));
  CHECK(m.graph.parameter_count() == build_zoo_model("gpt", parse_knob_list(knobs + ",heads_pad=8")).parameter_count());
  CostReport r = evaluate(m.graph, c, m.scheme);
  restate_for_given_model(r, m);
  CHECK(r.params == m.params);
  CHECK(r.model_flops_per_iteration == Approx(3 * given.model_forward_flops(FlopsConvention::megatron)));

  const SchemedModel even = make_schemed_model(given, "gpt", knobs, "dp", c, {});
  CHECK(even.note.empty());
  CHECK(even.graph.parameter_count() == given.parameter_count());
  // An explicit heads_pad, or a model that is no zoo model (a graph file), is not second-guessed.
  CHECK_THROWS_AS(make_schemed_model(build_zoo_model("gpt", parse_knob_list(knobs + ",heads_pad=1")), "gpt",
                                     knobs + ",heads_pad=1", spec, c, {}),
                  HeadsNotDivisible);
  CHECK_THROWS_AS(make_schemed_model(given, "gpt.json", "", spec, c, {}), HeadsNotDivisible);
}
