// AutoDist's Strategy message: every builder's strategy, and a hand-made one with every field
// set, goes out in each form (text, JSON, binary) and comes back equal; the binary form is
// protobuf's bytes; lossy and unpriceable inputs give their note or their named error.
#include "autoddl/sync/autodist.hpp"

#include <catch2/catch.hpp>

#include "../costmodel/input_error.hpp"
#include "autoddl/sync/autodist_proto.hpp"
#include "autoddl/sync/builders.hpp"
#include "tiny.hpp"

using namespace autoddl::sync;
using namespace autoddl::costmodel;
using nlohmann::json;

namespace {

const AutodistFormat kForms[] = {AutodistFormat::text, AutodistFormat::json, AutodistFormat::binary};

// Out in `f`, read back with format detection, mapped back.
Strategy round_trip(const Strategy& s, const std::vector<Variable>& vars, const ClusterSpec& c, AutodistFormat f,
                    const std::vector<std::string>& hosts) {
  const std::string bytes = write_autodist_strategy(strategy_to_autodist(s, vars, c, hosts), f);
  AutodistFormat detected = AutodistFormat::text;
  const json tree = read_autodist_strategy(bytes, "mem", &detected);
  CHECK(detected == f);
  return strategy_from_autodist(tree, vars, c, hosts, "mem");
}

// emb.table (1000 rows) in 3 uneven PS shards, fc1 all-reduced in fp16 over a ring, fc2.weight
// split on axis 1 into an all-reduce and a PS shard, fc2.bias on an asynchronous PS; the table's
// last shard with bounded staleness.
Strategy every_field() {
  Synchronizer ps0{.arch = Arch::ps, .server = 0};
  Synchronizer ps1_lr{.arch = Arch::ps, .server = 1, .local_replication = true};
  Synchronizer ar_fp16_ring{.compressor = Compressor::fp16, .algorithm = ArAlgorithm::ring};
  Synchronizer ar_group3{.group = 3};
  Synchronizer ps1_async{.arch = Arch::ps, .server = 1, .sync = false};
  Synchronizer ps0_stale{.arch = Arch::ps, .server = 0, .staleness = 2};
  Strategy s;
  s.id = "every-field";
  s.vars = {{"emb.table", 0, 3, true, {ps0, ps1_lr, ps0}},
            {"fc1.weight", 0, 1, false, {ar_fp16_ring}},
            {"fc1.bias", 0, 1, false, {ar_fp16_ring}},
            {"fc2.weight", 1, 2, false, {ar_group3, ps1_lr}},
            {"fc2.bias", 0, 1, false, {ps1_async}}};
  s.vars[0].parts[2] = ps0_stale;
  return s;
}

}  // namespace

TEST_CASE("every builder's strategy round-trips through AutoDist's text JSON and binary forms", "[sync][autodist]") {
  const std::vector<Variable> vars = extract_variables(test::tiny_model());
  const ClusterSpec c = test::test_cluster(3, 2);
  for (const BuilderInfo& b : builders()) {
    const Strategy s = b.build(vars, c);
    for (AutodistFormat f : kForms) {
      INFO(b.name << " as " << autodist_format_name(f));
      Strategy back = round_trip(s, vars, c, f, default_autodist_hosts(c.nodes));
      CHECK(back.id == b.name);
      CHECK(back.vars == s.vars);
    }
  }
}

TEST_CASE("partitioning local replication async PS groups fp16 and ring survive every AutoDist form",
          "[sync][autodist]") {
  const std::vector<Variable> vars = extract_variables(test::tiny_model());
  const ClusterSpec c = test::test_cluster(2, 2);
  const Strategy s = every_field();
  validate_strategy(s, vars, c, "every_field");
  for (AutodistFormat f : kForms) {
    INFO(autodist_format_name(f));
    const Strategy back = round_trip(s, vars, c, f, {"10.0.0.1", "10.0.0.2"});
    CHECK(back.id == s.id);
    CHECK(back.vars == s.vars);
  }
}

TEST_CASE("the AutoDist message names AutoDist's fields and devices", "[sync][autodist]") {
  const std::vector<Variable> vars = extract_variables(test::tiny_model());
  const ClusterSpec c = test::test_cluster(2, 2);
  const json tree = strategy_to_autodist(every_field(), vars, c, {"10.0.0.1", "10.0.0.2"});
  const json& emb = tree["node_config"][0];
  CHECK(emb["var_name"] == "emb.table:0");
  CHECK(emb["partitioner"] == "3,1");
  CHECK(emb["part_config"][1]["var_name"] == "emb.table/part_1:0");
  CHECK(emb["part_config"][1]["PSSynchronizer"]["reduction_destination"] == "10.0.0.2:CPU:0");
  CHECK(emb["part_config"][1]["PSSynchronizer"]["local_replication"] == true);
  CHECK(tree["node_config"][1]["AllReduceSynchronizer"] ==
        json({{"spec", "RING"}, {"compressor", "HorovodCompressor"}, {"group", 0}}));
  CHECK(tree["node_config"][3]["partitioner"] == "1,2");
  CHECK(tree["graph_config"]["replicas"] ==
        json({"10.0.0.1:GPU:0", "10.0.0.1:GPU:1", "10.0.0.2:GPU:0", "10.0.0.2:GPU:1"}));
  const std::string text = write_autodist_strategy(tree, AutodistFormat::text);
  CHECK_THAT(text, Catch::Contains("  AllReduceSynchronizer {\n    spec: RING\n    compressor: HorovodCompressor\n"));
  const json j = json::parse(write_autodist_strategy(tree, AutodistFormat::json));
  CHECK(j["nodeConfig"][0]["partConfig"][0]["PSSynchronizer"]["reductionDestination"] == "10.0.0.1:CPU:0");
  CHECK(j["graphConfig"]["replicas"].size() == 4);
}

TEST_CASE("the binary form is protobuf's wire encoding", "[sync][autodist]") {
  // Worked by hand from the proto: id (1, LEN) "a"; node_config (3, LEN) { var_name (1) "w";
  // AllReduceSynchronizer (3, LEN) { spec (1, varint) NCCL=1; compressor 0 left out; group (3) 2 } }.
  const json tree = {{"id", "a"},
                     {"node_config",
                      {{{"var_name", "w"},
                        {"AllReduceSynchronizer", {{"spec", "NCCL"}, {"compressor", "NoneCompressor"}, {"group", 2}}}}}}};
  const std::string want{"\x0a\x01" "a" "\x1a\x09" "\x0a\x01" "w" "\x1a\x04\x08\x01\x18\x02", 14};
  CHECK(write_autodist_strategy(tree, AutodistFormat::binary) == want);
  const json back = parse_autodist_binary(want, "mem");
  CHECK(back["node_config"][0]["AllReduceSynchronizer"]["group"] == 2);
  CHECK(back["node_config"][0]["AllReduceSynchronizer"]["spec"] == "NCCL");
  CHECK_INPUT_ERROR(parse_autodist_binary(want.substr(0, 13), "mem"), "byte 5: node_config[0]",
                    "runs past the end");
  CHECK_INPUT_ERROR(parse_autodist_binary(std::string("\x28\x01", 2), "mem"), "byte 0", "unknown field number 5");
}

TEST_CASE("AutoDist text and JSON readers take protobuf's spellings", "[sync][autodist]") {
  const std::string text = R"(# a comment
id: 'x' "y"
node_config: <
  var_name: "fc1.weight:0"; PSSynchronizer { reduction_destination: "node1:CPU:0" sync: t }
>
graph_config { replicas: ["node0:GPU:0", "node1:GPU:0"] }
)";
  const json t = parse_autodist_text(text, "mem");
  CHECK(t["id"] == "xy");
  CHECK(t["node_config"][0]["PSSynchronizer"]["sync"] == true);
  CHECK(t["graph_config"]["replicas"].size() == 2);
  const json j = parse_autodist_json(
      json::parse(R"({"nodeConfig": [{"var_name": "w", "AllReduceSynchronizer": {"spec": 2, "group": "4"}}], "path": null})"),
      "mem");
  CHECK(j["node_config"][0]["AllReduceSynchronizer"]["spec"] == "RING");
  CHECK(j["node_config"][0]["AllReduceSynchronizer"]["group"] == 4);
  CHECK_FALSE(j.contains("path"));
}

TEST_CASE("malformed AutoDist strategies name the line or field", "[sync][autodist]") {
  CHECK_INPUT_ERROR(parse_autodist_text("id: \"a\"\nnode_config { colour: 1 }\n", "s.txt"), "line 2 col 21",
                    "unknown field 'colour' of Node");
  CHECK_INPUT_ERROR(parse_autodist_text("node_config { PSSynchronizer {} AllReduceSynchronizer {} }", "s.txt"),
                    "line 1: node_config.AllReduceSynchronizer", "oneof 'synchronizer' already holds PSSynchronizer");
  CHECK_INPUT_ERROR(parse_autodist_text("node_config { AllReduceSynchronizer { spec: MPI } }", "s.txt"),
                    "line 1 col 45", "unknown enum value 'MPI' for spec (known: AUTO, NCCL, RING)");
  CHECK_INPUT_ERROR(parse_autodist_text("id: \"a\" id: \"b\"", "s.txt"), "line 1: id", "given twice");
  CHECK_INPUT_ERROR(parse_autodist_text("node_config {", "s.txt"), "line 1 col 14", "'}' missing");
  CHECK_INPUT_ERROR(parse_autodist_json(json::parse(R"({"nodeConfig": [{"AllReduceSynchronizer": {"group": 1.5}}]})"), "s.json"),
                    "nodeConfig[0].AllReduceSynchronizer.group", "must be an int32");
  CHECK_INPUT_ERROR(parse_autodist_format("yaml", "--format"), "", "unknown format 'yaml'");
  // Nesting is bounded (a crafted file must not exhaust the stack): parts in parts, 20 deep.
  std::string deep = "node_config {";
  for (int i = 0; i < 20; ++i) deep += " part_config {";
  CHECK_INPUT_ERROR(parse_autodist_text(deep + std::string(21, '}'), "s.txt"), "line 1 col 237",
                    "messages nested more than 16 deep");
}

TEST_CASE("AutoDist synchronizers autoddl cannot price are refused naming the field", "[sync][autodist]") {
  const std::vector<Variable> vars = extract_variables(test::tiny_model(false));
  const ClusterSpec c = test::test_cluster(2, 1);
  const auto hosts = default_autodist_hosts(2);
  // fc1.weight gets the synchronizer under test; the other three variables are plain all-reduce.
  auto with = [&](const std::string& node) {
    std::string t = node;
    for (const char* v : {"fc1.bias", "fc2.weight", "fc2.bias"})
      t += std::string("\nnode_config { var_name: \"") + v + ":0\" AllReduceSynchronizer {} }";
    return strategy_from_autodist(parse_autodist_text(t, "s.txt"), vars, c, hosts, "s.txt");
  };
  CHECK(with("node_config { var_name: \"fc1.weight:0\" AllReduceSynchronizer { spec: AUTO } }").vars.size() == 4);
  // Bounded staleness is priced (the step waits for pushes at most `staleness` steps old) but,
  // as in AutoDist's builders, only on a synchronous PS.
  CHECK_INPUT_ERROR(with(R"(node_config { var_name: "fc1.weight:0"
                      PSSynchronizer { reduction_destination: "node0:CPU:0" staleness: 3 } })"),
                    "node_config[0].PSSynchronizer.staleness", "needs sync: true");
  const Strategy stale = with(R"(node_config { var_name: "fc1.weight:0"
                      PSSynchronizer { reduction_destination: "node0:CPU:0" sync: true staleness: 3 } })");
  bool found = false;
  for (const VarConfig& v : stale.vars) {
    if (v.var != "fc1.weight") continue;
    found = true;
    CHECK(v.parts.at(0).staleness == 3);
    CHECK(v.parts.at(0).sync);
  }
  CHECK(found);
  CHECK_INPUT_ERROR(with("node_config { var_name: \"fc1.weight:0\" AllReduceSynchronizer { compressor: PowerSGDCompressor } }"),
                    "node_config[0].AllReduceSynchronizer.compressor", "PowerSGD");
  CHECK_INPUT_ERROR(with("node_config { var_name: \"fc1.weight:0\" PSSynchronizer { reduction_destination: \"10.1.1.1:CPU:0\" } }"),
                    "node_config[0].PSSynchronizer.reduction_destination", "host '10.1.1.1' is not a node");
  CHECK_INPUT_ERROR(with("node_config { var_name: \"fc9.weight:0\" AllReduceSynchronizer {} }"),
                    "node_config[0].var_name", "'fc9.weight:0' is no variable of the model");
  CHECK_INPUT_ERROR(with("node_config { var_name: \"fc1.weight:0\" }"), "node_config[0]", "has no synchronizer");
  CHECK_INPUT_ERROR(with("node_config { var_name: \"fc1.weight:0\" partitioner: \"2,2\" }"), "node_config[0].partitioner",
                    "splits more than one axis");
  CHECK_INPUT_ERROR(with("node_config { var_name: \"fc1.weight:0\" partitioner: \"2\" }"), "node_config[0].partitioner",
                    "has 1 entries; fc1.weight has 2 dimensions");
  CHECK_INPUT_ERROR(with("node_config { var_name: \"fc1.weight:0\" partitioner: \"2,1\" part_config { AllReduceSynchronizer {} } }"),
                    "node_config[0].part_config", "1 parts for 2 shard(s)");
  CHECK_INPUT_ERROR(with("node_config { var_name: \"fc1.weight:0\" AllReduceSynchronizer {} }\n"
                         "graph_config { replicas: \"node0:GPU:0\" }"),
                    "graph_config.replicas", "0 replica(s) on node1");
}

TEST_CASE("what AutoDist cannot say is exported as its nearest spec with a note", "[sync][autodist]") {
  const std::vector<Variable> vars = extract_variables(test::tiny_model(false));
  const ClusterSpec c = test::test_cluster(2, 1);
  Strategy s = find_builder("all_reduce").build(vars, c);
  for (VarConfig& v : s.vars) v.parts[0].algorithm = ArAlgorithm::hierarchical;
  std::vector<std::string> notes;
  const json tree = strategy_to_autodist(s, vars, c, default_autodist_hosts(2), [&](const std::string& n) { notes.push_back(n); });
  REQUIRE(notes.size() == 1);
  CHECK_THAT(notes[0], Catch::Contains("4 shard(s) written as NCCL"));
  CHECK(tree["node_config"][0]["AllReduceSynchronizer"]["spec"] == "NCCL");
  const Strategy back = strategy_from_autodist(tree, vars, c, default_autodist_hosts(2), "mem");
  CHECK(back.vars[0].parts[0].algorithm == ArAlgorithm::automatic);
  // Error feedback: the same bytes on the wire, so fp16, with a note.
  json ef = tree;
  ef["node_config"][0]["AllReduceSynchronizer"]["compressor"] = "HorovodCompressorEF";
  notes.clear();
  const Strategy with_ef = strategy_from_autodist(ef, vars, c, default_autodist_hosts(2), "mem",
                                                  [&](const std::string& n) { notes.push_back(n); });
  CHECK(with_ef.vars[0].parts[0].compressor == Compressor::fp16);
  CHECK(notes.size() == 1);
}
