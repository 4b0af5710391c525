// A sweep config is checked whole before any cell runs: each bad field is named by its path.
#include <catch2/catch.hpp>

#include "../costmodel/input_error.hpp"
#include "autoddl/experiments/config.hpp"

using namespace autoddl::experiments;
using nlohmann::json;

namespace {

json good() {
  return json::parse(R"({
    "name": "t",
    "models": [{"name": "mlp", "knobs": {"layers": [2, 4], "batch": "{gpus*8}"}}],
    "clusters": [{"name": "dgx-a100", "gpus": [2, 16]}, {"name": "piz-daint", "nodes": [4]}],
    "tasks": [{"search": ["cd-nbh,dp"], "time_limit_s": 5},
              {"schemes": ["dp", "megatron:tp={gpus_per_node},pp=1,dp={nodes}"], "evaluators": ["analytical", "sim"]}]
  })");
}

// The field path a config with `edit` applied is rejected for.
std::string field_of(void (*edit)(json&)) {
  json j = good();
  edit(j);
  auto e = input_error_of([&] { sweep_config_from_json(j, "cfg.json"); });
  REQUIRE(e);
  CHECK(e->file() == "cfg.json");
  return e->field();
}

}  // namespace

TEST_CASE("a good sweep config loads with every list and default in place", "[experiments][config]") {
  SweepConfig c = sweep_config_from_json(good(), "cfg.json");
  CHECK(c.output == "results/t");
  REQUIRE(c.models.size() == 1);
  CHECK(c.models[0].knobs.size() == 2);
  REQUIRE(c.clusters.size() == 2);
  // 2 GPUs of an 8-GPU DGX node: one node with two GPUs; 16 GPUs: two whole nodes.
  CHECK(c.clusters[0].sizes[0].nodes == 1);
  CHECK(c.clusters[0].sizes[0].gpus_per_node == 2);
  CHECK(c.clusters[0].sizes[0].partial_node);
  CHECK(c.clusters[0].sizes[1].nodes == 2);
  CHECK_FALSE(c.clusters[0].sizes[1].partial_node);
  CHECK(c.clusters[1].sizes[0].gpus == 4);
  CHECK(c.tasks[0].evaluators == std::vector<std::string>{"analytical"});
  CHECK(c.tasks[1].evaluators.size() == 2);
  CHECK(c.seeds == std::vector<uint64_t>{1});
}

TEST_CASE("a bad sweep config names the field that is wrong", "[experiments][config]") {
  CHECK(field_of([](json& j) { j.erase("name"); }) == "name");
  CHECK(field_of([](json& j) { j["colour"] = 1; }) == "colour");
  CHECK(field_of([](json& j) { j["models"][0]["name"] = "gpt5"; }) == "models[0].name");
  CHECK(field_of([](json& j) { j["models"][0]["knobs"]["layerz"] = 2; }) == "models[0].knobs.layerz");
  CHECK(field_of([](json& j) { j["models"][0]["knobs"]["layers"] = json::array({2, 1.5}); }) ==
        "models[0].knobs.layers[1]");
  // A value the zoo refuses is found by building the model before any cell runs.
  CHECK(field_of([](json& j) { j["models"][0]["knobs"]["layers"] = 0; }) == "models[0].knobs.layers");
  CHECK(field_of([](json& j) { j["models"][0]["knobs"]["batch"] = "{gpus/3}"; }) == "models[0].knobs.batch");
  CHECK(field_of([](json& j) { j["clusters"][1]["name"] = "piz-nope"; }) == "clusters[1].name");
  CHECK(field_of([](json& j) { j["clusters"][0]["gpus"] = json::array({2, 12}); }) == "clusters[0].gpus[1]");
  CHECK(field_of([](json& j) { j["clusters"][1]["nodes"] = json::array({0}); }) == "clusters[1].nodes[0]");
  CHECK(field_of([](json& j) { j["tasks"][0]["search"] = json::array({"cd-nbh,magic"}); }) == "tasks[0].search[0]");
  CHECK(field_of([](json& j) { j["tasks"][1]["schemes"][1] = "megatron:tq=2"; }) == "tasks[1].schemes[1]");
  CHECK(field_of([](json& j) { j["tasks"][1]["schemes"][0] = "dp{gpu}"; }) == "tasks[1].schemes[0]");
  CHECK(field_of([](json& j) { j["tasks"][1]["evaluators"] = json::array({"gpu"}); }) == "tasks[1].evaluators[0]");
  CHECK(field_of([](json& j) { j["tasks"][1]["time_limit_s"] = 3; }) == "tasks[1].time_limit_s");
  CHECK(field_of([](json& j) { j["tasks"][0]["time_limit_s"] = -1; }) == "tasks[0].time_limit_s");
  CHECK(field_of([](json& j) { j["repetitions"] = 0; }) == "repetitions");
}

TEST_CASE("placeholders take the cell's cluster size and a division must be exact", "[experiments][config]") {
  ClusterSize s;
  s.nodes = 2;
  s.gpus = 16;
  s.gpus_per_node = 8;
  std::string out, err;
  REQUIRE(substitute_placeholders("megatron:tp={gpus_per_node},pp=1,dp={nodes}", s, out, err));
  CHECK(out == "megatron:tp=8,pp=1,dp=2");
  REQUIRE(substitute_placeholders("{gpus*4}", s, out, err));
  CHECK(out == "64");
  REQUIRE(substitute_placeholders("dp={gpus/4}", s, out, err));
  CHECK(out == "dp=4");
  CHECK_FALSE(substitute_placeholders("{gpus/3}", s, out, err));
  CHECK(err.find("not divisible") != std::string::npos);
  CHECK_FALSE(substitute_placeholders("{cores}", s, out, err));
  CHECK_FALSE(substitute_placeholders("{gpus", s, out, err));
}
