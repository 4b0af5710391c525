// Graph JSON: every zoo model survives a round trip (same parameters, FLOPs, ops and JSON);
// the example user model loads; and each malformed input is rejected naming the file and
// the JSON path of the offending field.
#include "autoddl/costmodel/graph_json.hpp"

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "autoddl/costmodel/zoo.hpp"
#include "input_error.hpp"

using namespace autoddl::costmodel;
using nlohmann::json;

namespace {
// A small valid graph: x(4, 8) · w(8, 3) + b -> relu -> cross-entropy.
json tiny() {
  return json::parse(R"({
    "name": "tiny", "batch": 4,
    "tensors": [
      {"name": "x", "shape": [4, 8], "dtype": "fp32", "role": "input"},
      {"name": "w", "shape": [8, 3], "dtype": "fp32", "role": "parameter"},
      {"name": "b", "shape": [3], "dtype": "fp32", "role": "parameter"},
      {"name": "y", "shape": [4, 3], "dtype": "fp32", "role": "activation"},
      {"name": "yb", "shape": [4, 3], "dtype": "fp32", "role": "activation"},
      {"name": "r", "shape": [4, 3], "dtype": "fp32", "role": "activation"},
      {"name": "labels", "shape": [4], "dtype": "int64", "role": "input"},
      {"name": "loss", "shape": [], "dtype": "fp32", "role": "activation"}
    ],
    "ops": [
      {"name": "fc", "kind": "matmul", "inputs": ["x", "w"], "outputs": ["y"]},
      {"name": "bias", "kind": "bias_add", "inputs": ["y", "b"], "outputs": ["yb"], "attrs": {"axis": -1}},
      {"name": "relu", "kind": "unary", "inputs": ["yb"], "outputs": ["r"], "attrs": {"fn": "relu"}, "block": "head"},
      {"name": "loss", "kind": "cross_entropy", "inputs": ["r", "labels"], "outputs": ["loss"]}
    ]
  })");
}
}  // namespace

TEST_CASE("every zoo model round-trips through JSON with equal parameters, FLOPs and ops",
          "[json]") {
  for (const ZooModel& m : zoo_models()) {
    INFO(m.name);
    Graph g = build_zoo_model(m.name, {});
    json j = graph_to_json(g);
    Graph back = graph_from_json(json::parse(j.dump()), "roundtrip.json");
    CHECK(back.name == g.name);
    CHECK(back.batch == g.batch);
    CHECK(back.ops.size() == g.ops.size());
    CHECK(back.tensors.size() == g.tensors.size());
    CHECK(back.parameter_count() == g.parameter_count());
    CHECK(back.forward_flops() == g.forward_flops());
    CHECK(back.backward_flops() == g.backward_flops());
    for (size_t i = 0; i < g.ops.size(); ++i) {
      CHECK(back.ops[i].work.fwd_bytes == g.ops[i].work.fwd_bytes);
      CHECK(back.ops[i].block == g.ops[i].block);
      CHECK(back.ops[i].attrs.kernel_h == g.ops[i].attrs.kernel_h);
    }
    CHECK(graph_to_json(back) == j);
  }
}

TEST_CASE("the example user model experiments/models/tiny_mlp.json loads and is checked",
          "[json]") {
  Graph g = load_graph_file(AUTODDL_SOURCE_DIR "/experiments/models/tiny_mlp.json");
  CHECK(g.name == "tiny_mlp");
  CHECK(g.batch == 32);
  CHECK(g.parameter_count() == 784 * 128 + 128 + 128 * 10 + 10);
  CHECK(g.forward_flops() > 2.0 * 32 * (784 * 128 + 128 * 10));
  CHECK(g.ops[g.find_op("relu1")].attrs.unary == UnaryFn::relu);
}

TEST_CASE("a graph without a name takes its file's stem", "[json]") {
  json j = tiny();
  j.erase("name");
  CHECK(graph_from_json(j, "models/my_net.json").name == "my_net");
}

TEST_CASE("a missing or malformed graph file names the file", "[json][bad-input]") {
  auto missing = input_error_of([] { load_graph_file("/nonexistent/graph.json"); });
  REQUIRE(missing);
  CHECK(missing->file() == "/nonexistent/graph.json");
  std::string path =
      (std::filesystem::temp_directory_path() / "autoddl_graph_json_test_malformed.json").string();
  std::ofstream(path) << "{\"batch\": 4,\n \"tensors\": [}";
  auto bad = input_error_of([&] { load_graph_file(path); });
  std::remove(path.c_str());
  REQUIRE(bad);
  CHECK(bad->file() == path);
  CHECK(bad->field() == "line 2:14");
  CHECK(bad->reason() == "malformed JSON");
}

TEST_CASE("each malformed graph is rejected naming the JSON path of the bad field",
          "[json][bad-input]") {
  struct Case {
    const char* what;
    void (*mutate)(json&);
    const char* field;
    const char* reason;
  };
  const Case cases[] = {
      {"top level is not an object", [](json& j) { j = json::array(); }, "",
       "a graph must be a JSON object"},
      {"unknown top-level key", [](json& j) { j["batches"] = 4; }, "batches",
       "unknown key (allowed: batch, tensors, ops, name, comment)"},
      {"missing batch", [](json& j) { j.erase("batch"); }, "batch", "missing required field"},
      {"batch of the wrong type", [](json& j) { j["batch"] = "4"; }, "batch",
       "expected an integer"},
      {"batch zero", [](json& j) { j["batch"] = 0; }, "batch", "must be at least 1"},
      {"tensors not an array", [](json& j) { j["tensors"] = json::object(); }, "tensors",
       "expected an array"},
      {"unknown tensor key", [](json& j) { j["tensors"][1]["shap"] = 1; }, "tensors[1].shap",
       "unknown key (allowed: name, shape, dtype, role, batched, comment)"},
      {"missing dtype", [](json& j) { j["tensors"][2].erase("dtype"); }, "tensors[2].dtype",
       "missing required field"},
      {"negative dimension", [](json& j) { j["tensors"][1]["shape"][0] = -8; },
       "tensors[1].shape[0]", "must be at least 1"},
      {"fractional dimension", [](json& j) { j["tensors"][1]["shape"][1] = 2.5; },
       "tensors[1].shape[1]", "expected an integer"},
      {"unknown dtype", [](json& j) { j["tensors"][0]["dtype"] = "fp4"; }, "tensors[0].dtype",
       "unknown dtype 'fp4' (known: fp32, fp16, bf16, fp8, int32, int64)"},
      {"unknown role", [](json& j) { j["tensors"][1]["role"] = "weight"; }, "tensors[1].role",
       "unknown role 'weight' (known: activation, parameter, input)"},
      {"duplicate tensor name", [](json& j) { j["tensors"][4]["name"] = "y"; }, "tensors[4].name",
       "duplicate tensor name 'y' (also tensors[3])"},
      {"unknown op kind", [](json& j) { j["ops"][0]["kind"] = "matmull"; }, "ops[0].kind",
       "unknown op kind 'matmull' (known: matmul, conv2d, pool, bias_add, unary, binary, softmax, "
       "layer_norm, batch_norm, embedding, reshape, transpose, concat, cross_entropy, attention, moe_router, moe_dispatch, expert_matmul, "
       "moe_combine)"},
      {"unknown op key", [](json& j) { j["ops"][1]["atrs"] = json::object(); }, "ops[1].atrs",
       "unknown key (allowed: name, kind, inputs, outputs, attrs, block, comment)"},
      {"missing outputs", [](json& j) { j["ops"][3].erase("outputs"); }, "ops[3].outputs",
       "missing required field"},
      {"unknown input tensor", [](json& j) { j["ops"][0]["inputs"][1] = "w2"; }, "ops[0].inputs[1]",
       "unknown tensor 'w2'"},
      {"input name of the wrong type", [](json& j) { j["ops"][0]["inputs"][0] = 3; },
       "ops[0].inputs[0]", "expected a string"},
      {"duplicate op name", [](json& j) { j["ops"][2]["name"] = "fc"; }, "ops[2].name",
       "duplicate op name 'fc' (also ops[0])"},
      {"attribute of another kind", [](json& j) { j["ops"][2]["attrs"]["axis"] = 0; },
       "ops[2].attrs.axis", "unknown attribute for a unary op (allowed: fn)"},
      {"attribute on a kind without attributes",
       [](json& j) {
         j["ops"][3]["attrs"] = {{"axis", 1}};
       },
       "ops[3].attrs.axis", "unknown attribute for a cross_entropy op (it takes none)"},
      {"missing required attribute", [](json& j) { j["ops"][2].erase("attrs"); }, "ops[2].attrs.fn",
       "missing required attribute of a unary op"},
      {"unknown function", [](json& j) { j["ops"][2]["attrs"]["fn"] = "swish"; }, "ops[2].attrs.fn",
       "unknown function 'swish' (known: relu, gelu, dropout, tanh, sigmoid, silu)"},
      {"attribute of the wrong type",
       [](json& j) {
         j["ops"][0]["attrs"] = {{"transpose_b", 1}};
       },
       "ops[0].attrs.transpose_b", "expected true or false"},
      {"inner dimensions disagree",
       [](json& j) {
         j["tensors"][1]["shape"] = {7, 3};
       },
       "ops[0].inputs[1]",
       "op 'fc': tensor 'w' has shape [7, 3]: inner dim 7 does not match A's k = 8 (A is [4, 8])"},
      {"output declared with the wrong shape",
       [](json& j) {
         j["tensors"][3]["shape"] = {4, 2};
       },
       "ops[0].outputs[0]",
       "op 'fc': tensor 'y' is declared [4, 2] but the matmul rule gives [4, 3]"},
      {"wrong number of inputs", [](json& j) { j["ops"][1]["inputs"] = {"y"}; }, "ops[1].inputs",
       "op 'bias': has 1 inputs but a bias_add op takes 2"},
      {"ops out of topological order", [](json& j) { std::swap(j["ops"][0], j["ops"][1]); },
       "ops[0].inputs[0]",
       "op 'bias': tensor 'y' is produced by op 'fc', which comes later (ops[1]); ops must be in "
       "topological order"},
      {"a tensor written twice", [](json& j) { j["ops"][2]["outputs"][0] = "yb"; }, "tensors[4]",
       "tensor 'yb' is written by both op 'bias' and op 'relu'; each tensor is written once"},
      {"an activation no op writes",
       [](json& j) {
         j["tensors"].push_back(
             {{"name", "z"}, {"shape", {1}}, {"dtype", "fp32"}, {"role", "activation"}});
       },
       "tensors[8]", "tensor 'z' is an activation that no op produces"},
      {"float labels", [](json& j) { j["tensors"][6]["dtype"] = "fp32"; }, "ops[3].inputs[1]",
       "op 'loss': tensor 'labels' labels must be int32 or int64, not fp32"},
  };
  REQUIRE_NOTHROW(graph_from_json(tiny(), "tiny.json"));
  for (const Case& c : cases) {
    INFO(c.what);
    json j = tiny();
    c.mutate(j);
    auto e = input_error_of([&] { graph_from_json(j, "tiny.json"); });
    REQUIRE(e);
    CHECK(e->file() == "tiny.json");
    CHECK(e->field() == c.field);
    CHECK(e->reason() == c.reason);
  }
}

TEST_CASE("pool attributes: kernel as one integer or [height, width], required unless global",
          "[json]") {
  json j = json::parse(R"({
    "batch": 2,
    "tensors": [
      {"name": "x", "shape": [2, 3, 8, 8], "dtype": "fp32", "role": "input"},
      {"name": "p", "shape": [2, 3, 4, 3], "dtype": "fp32", "role": "activation"},
      {"name": "g", "shape": [2, 3, 1, 1], "dtype": "fp32", "role": "activation"}
    ],
    "ops": [
      {"name": "pool", "kind": "pool", "inputs": ["x"], "outputs": ["p"],
       "attrs": {"fn": "max", "kernel": [2, 4], "stride": 2}},
      {"name": "gap", "kind": "pool", "inputs": ["x"], "outputs": ["g"], "attrs": {"fn": "global_avg"}}
    ]
  })");
  Graph g = graph_from_json(j, "pool.json");
  CHECK(g.ops[0].attrs.kernel_h == 2);
  CHECK(g.ops[0].attrs.kernel_w == 4);
  j["ops"][0]["attrs"].erase("kernel");
  auto e = input_error_of([&] { graph_from_json(j, "pool.json"); });
  REQUIRE(e);
  CHECK(e->field() == "ops[0].attrs.kernel");
}
