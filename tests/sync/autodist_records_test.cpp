// AutoDist-format runs read into dataset records: a record set the test writes itself (strategies
// in all three forms, runtimes as a list and as an average, per-run and shared resource specs)
// becomes records that read_records takes, with the strategies and labels it was given; every
// malformed input names its file and field, and leaves no records.jsonl behind.
#include "autoddl/sync/autodist_records.hpp"

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "../costmodel/input_error.hpp"
#include "autoddl/costmodel/jsonl.hpp"
#include "autoddl/sync/autodist.hpp"
#include "autoddl/sync/autodist_proto.hpp"
#include "autoddl/sync/builders.hpp"
#include "autoddl/sync/features.hpp"
#include "autoddl/sync/strategy_json.hpp"
#include "autoddl/sync/training.hpp"
#include "tiny.hpp"

using namespace autoddl::sync;
using namespace autoddl::costmodel;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

// A fresh directory per test.
fs::path fresh(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("autoddl_test_autodist_" + name);
  fs::remove_all(dir);
  return dir;
}

const char* kSpec = R"(# two nodes, AutoDist style
nodes:
- address: 10.0.0.1   # the chief
  gpus: [0, 1]
  chief: true
  network_bandwidth: 8
- address: 10.0.0.2
  gpus:
    - 0
    - 1
  ssh_config: conf
ssh:
  conf:
    username: 'me'
    key_file: '~/.ssh/id_rsa'
)";

struct RecordSet {
  fs::path dir;
  std::vector<Strategy> strategies;  // by run ID order: run0, run1, run2
};

// Three builders' strategies on the tiny model, one per form; run1 has its own resource spec
// naming the hosts, the others use the shared one given to the import.
RecordSet write_record_set(const std::string& name, const std::vector<Variable>& vars, const ClusterSpec& c) {
  RecordSet rs{fresh(name), {}};
  const std::vector<std::string> hosts = {"10.0.0.1", "10.0.0.2"};
  const char* builders_used[] = {"partitioned_ps", "parallax", "horovod-fp16"};
  const AutodistFormat forms[] = {AutodistFormat::binary, AutodistFormat::text, AutodistFormat::json};
  const char* names[] = {"run0", "run1.pbtxt", "run2.json"};
  for (int i = 0; i < 3; ++i) {
    Strategy s = find_builder(builders_used[i]).build(vars, c);
    write(rs.dir / "strategies" / names[i], write_autodist_strategy(strategy_to_autodist(s, vars, c, hosts), forms[i]));
    rs.strategies.push_back(s);
  }
  write(rs.dir / "runtime" / "run0.yml", "runtime: [0.5, 0.7]\naverage: 0.6\n");
  write(rs.dir / "runtime" / "run1.yml", "runtime:\n  - 0.2\n  - 0.4\n");
  write(rs.dir / "runtime" / "run2", "average: 1.5e-1\n");
  write(rs.dir / "resource_spec" / "run1.yml", kSpec);
  write(rs.dir / "shared_spec.yml", kSpec);
  return rs;
}

AutodistImport options(const fs::path& dir) {
  AutodistImport o;
  o.pair = {"tiny", {}, "test"};
  o.resource_spec = (dir / "shared_spec.yml").string();
  return o;
}

}  // namespace

TEST_CASE("AutoDist runs import as dataset records with their strategies and measured runtimes", "[sync][autodist]") {
  const Graph g = test::tiny_model();
  const std::vector<Variable> vars = extract_variables(g);
  const ClusterSpec c = test::test_cluster(2, 2, 1e9);  // 8 Gbit/s per node, as the spec says
  const RecordSet rs = write_record_set("import", vars, c);
  std::vector<std::string> notes;
  AutodistImport o = options(rs.dir);
  o.note = [&](const std::string& n) { notes.push_back(n); };
  const fs::path out = rs.dir / "ds";
  CHECK(import_autodist_dataset(rs.dir.string(), g, c, o, out.string()) == 3);
  CHECK(notes.empty());  // same bandwidth, no EF compressor

  std::vector<json> records;
  autoddl::read_jsonl_lines((out / "records.jsonl").string(),
                   [&](const std::string& line, int64_t) { records.push_back(json::parse(line)); });
  REQUIRE(records.size() == 3);
  const double want_runtime[] = {0.6, 0.3, 0.15};
  const std::vector<std::vector<double>> want_runs = {{0.5, 0.7}, {0.2, 0.4}, {0.15}};
  const char* ids[] = {"run0", "run1", "run2"};
  for (size_t i = 0; i < 3; ++i) {
    INFO(ids[i]);
    CHECK(records[i]["key"] == "tiny@test#" + std::to_string(i));
    CHECK(records[i]["autodist_id"] == ids[i]);
    CHECK(records[i]["builder"] == "imported");
    CHECK(records[i]["runtime_s"].get<double>() == Approx(want_runtime[i]));
    CHECK(records[i]["runtimes_s"].get<std::vector<double>>() == want_runs[i]);
    CHECK(records[i]["features"].size() == feature_names().size());
    const Strategy back = strategy_from_json(records[i]["strategy"], "record");
    CHECK(back.vars == rs.strategies[i].vars);
  }
  CHECK(records[1]["hosts"] == (rs.dir / "resource_spec" / "run1.yml").string());
  // What training reads: one pair, the three labels.
  const std::vector<LabeledRecord> labeled = read_records({out.string()});
  REQUIRE(labeled.size() == 3);
  CHECK(labeled[2].pair == "tiny@test");
  CHECK(labeled[2].runtime_s == Approx(0.15));
  CHECK(fs::exists(out / "schema.json"));
  // A second import into the same directory is refused: it would replace the records.
  CHECK_INPUT_ERROR(import_autodist_dataset(rs.dir.string(), g, c, o, out.string()), "", "exists already");
  fs::remove_all(rs.dir);
}

TEST_CASE("a resource spec whose bandwidth differs from the cluster's gets a note", "[sync][autodist]") {
  const Graph g = test::tiny_model();
  const std::vector<Variable> vars = extract_variables(g);
  const ClusterSpec c = test::test_cluster(2, 2, 12.5e9);  // 100 Gbit/s; the spec says 8
  const RecordSet rs = write_record_set("bandwidth", vars, c);
  std::vector<std::string> notes;
  AutodistImport o = options(rs.dir);
  o.note = [&](const std::string& n) { notes.push_back(n); };
  CHECK(import_autodist_dataset(rs.dir.string(), g, c, o, (rs.dir / "ds").string()) == 3);
  REQUIRE(notes.size() == 1);
  CHECK_THAT(notes[0], Catch::Contains("network_bandwidth 8 Gbit/s on 10.0.0.1; cluster test models 100 Gbit/s"));
  fs::remove_all(rs.dir);
}

TEST_CASE("a malformed AutoDist record set names the file and field and writes nothing", "[sync][autodist]") {
  const Graph g = test::tiny_model();
  const std::vector<Variable> vars = extract_variables(g);
  const ClusterSpec c = test::test_cluster(2, 2, 1e9);
  const RecordSet rs = write_record_set("malformed", vars, c);
  const fs::path out = rs.dir / "ds";
  auto import = [&] { return import_autodist_dataset(rs.dir.string(), g, c, options(rs.dir), out.string()); };
  auto error_of = [&] {
    auto err = input_error_of(import);
    CHECK_FALSE(fs::exists(out / "records.jsonl"));
    return err;
  };
  SECTION("a run without a runtime") {
    fs::remove(rs.dir / "runtime" / "run2");
    const auto err = error_of();
    REQUIRE(err);
    CHECK(err->file() == (rs.dir / "strategies" / "run2.json").string());
    CHECK_THAT(err->reason(), Catch::Contains("no runtime file for run 'run2'"));
  }
  SECTION("a runtime that is no time") {
    write(rs.dir / "runtime" / "run1.yml", "runtime: [0.2, -1]\n");
    const auto err = error_of();
    REQUIRE(err);
    CHECK(err->file() == (rs.dir / "runtime" / "run1.yml").string());
    CHECK(err->field() == "runtime[1]");
  }
  SECTION("a resource spec with another node count than the cluster") {
    write(rs.dir / "resource_spec" / "run1.yml", "nodes:\n  - address: a\n    gpus: [0, 1]\n");
    const auto err = error_of();
    REQUIRE(err);
    CHECK(err->field() == "nodes");
    CHECK_THAT(err->reason(), Catch::Contains("1 node(s); cluster test has 2"));
  }
  SECTION("a strategy on hosts the resource spec does not name") {
    fs::remove(rs.dir / "resource_spec" / "run1.yml");
    write(rs.dir / "shared_spec.yml", "nodes:\n  - {address: x, gpus: [0, 1]}\n  - {address: y, gpus: [0, 1]}\n");
    const auto err = error_of();
    REQUIRE(err);
    CHECK(err->file() == (rs.dir / "strategies" / "run0").string());
    CHECK_THAT(err->reason(), Catch::Contains("host '10.0.0.1' is not a node of the cluster (hosts: x, y"));
  }
  SECTION("a strategy file that is no strategy") {
    write(rs.dir / "strategies" / "run1.pbtxt", "node_config { var_name: \"fc1.weight:0\" AllReduceSynchronizer { group: -1 } }");
    const auto err = error_of();
    REQUIRE(err);
    CHECK(err->field() == "node_config[0].AllReduceSynchronizer.group");
  }
  SECTION("a YAML feature the reader does not take") {
    write(rs.dir / "runtime" / "run0.yml", "average: &a 0.5\n");
    const auto err = error_of();
    REQUIRE(err);
    CHECK(err->field() == "line 1");
    CHECK_THAT(err->reason(), Catch::Contains("anchors, aliases and tags are not supported"));
  }
  SECTION("no strategies directory") {
    fs::remove_all(rs.dir / "strategies");
    const auto err = error_of();
    REQUIRE(err);
    CHECK(err->field() == "strategies");
  }
  fs::remove_all(rs.dir);
}

TEST_CASE("AutoDist resource specs read as AutoDist reads them", "[sync][autodist]") {
  const AutodistResourceSpec spec = parse_resource_spec(kSpec, "spec.yml");
  REQUIRE(spec.nodes.size() == 2);
  CHECK(spec.nodes[0].address == "10.0.0.1");
  CHECK(spec.nodes[0].chief);
  CHECK(spec.nodes[0].network_bandwidth_gbps == 8);
  CHECK(spec.nodes[1].gpus == std::vector<int>{0, 1});
  CHECK_FALSE(spec.nodes[1].chief);
  // What export writes reads back to the same hosts.
  const ClusterSpec c = test::test_cluster(3, 2);
  const std::vector<std::string> hosts = {"a", "b", "c"};
  CHECK(resource_spec_hosts(parse_resource_spec(resource_spec_yaml(c, hosts), "out.yml"), c, "out.yml") == hosts);
  CHECK_INPUT_ERROR(parse_resource_spec("nodes:\n  - address: a\n    gpus: [0, 0]\n", "s.yml"), "nodes[0].gpus",
                    "GPU 0 is listed twice");
  CHECK_INPUT_ERROR(parse_resource_spec("nodes:\n  - gpus: [0]\n", "s.yml"), "nodes[0].address", "missing");
  CHECK_INPUT_ERROR(parse_resource_spec("nodes:\n  - address: a\n\tgpus: [0]\n", "s.yml"), "line 3", "a tab");
  CHECK_INPUT_ERROR(resource_spec_hosts(parse_resource_spec("nodes:\n  - address: a\n    gpus: [0]\n"
                                                            "  - address: b\n    gpus: [0]\n    cpus: [0]\n",
                                                            "s.yml"),
                                        test::test_cluster(2, 2), "s.yml"),
                    "nodes[0].gpus", "1 GPU(s) on a; cluster test has 2 per node");
  CHECK_INPUT_ERROR(parse_runtime("trials: 3\n", "r.yml"), "average", "missing");
}

TEST_CASE("a flow collection whose item is followed by neither a comma nor its bracket is refused at once",
          "[sync][autodist]") {
  // The fuzzer's 146-byte spec of 2026-12-07: "[chief: true" with no ']' read ':' again and
  // again as an empty item, past 2 GB, until the flow reader required ',' or the bracket.
  CHECK_INPUT_ERROR(parse_resource_spec("nodes:\n- address: a\n  gpus:runtime: [chief: true\n", "s.yml"), "line 3",
                    "']' missing");
  CHECK_INPUT_ERROR(parse_resource_spec("nodes:\n  - address: a\n    gpus: [\"0\" 1]\n", "s.yml"), "line 3",
                    "expected ',' or ']' in a flow collection");
  CHECK_INPUT_ERROR(parse_resource_spec("nodes:\n  - address: a\n    gpus: {x: \"1\" y}\n", "s.yml"), "line 3",
                    "expected ',' or '}' in a flow collection");
  // PyYAML reads [a: b] as a list holding one single-pair mapping; so does this reader.
  CHECK_INPUT_ERROR(parse_resource_spec("nodes:\n  - address: a\n    gpus: [0: 1]\n", "s.yml"), "nodes[0].gpus",
                    "");
}
