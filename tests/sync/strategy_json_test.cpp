// Strategy JSON: every builder's strategy round-trips; bad files fail with the field path.
#include "autoddl/sync/strategy_json.hpp"

#include <catch2/catch.hpp>

#include "../costmodel/input_error.hpp"
#include "autoddl/sync/builders.hpp"
#include "tiny.hpp"

using namespace autoddl::sync;
using namespace autoddl::costmodel;
using nlohmann::json;

TEST_CASE("every builder's strategy round-trips through JSON", "[sync][json]") {
  std::vector<Variable> vars = extract_variables(test::tiny_model());
  ClusterSpec c = test::test_cluster(3, 2);
  for (const BuilderInfo& b : builders()) {
    INFO(b.name);
    Strategy s = b.build(vars, c);
    Strategy back = strategy_from_json(json::parse(strategy_to_json(s).dump()), "mem");
    CHECK(back == s);
  }
  SECTION("non-default synchronizer fields survive too") {
    Strategy s = find_builder("partitioned_ps").build(vars, c);
    s.vars[0].parts[1].local_replication = true;
    s.vars[0].parts[0].staleness = 2;
    s.vars[2].parts[0].sync = false;
    s.vars[1] = {"fc1.weight", 0, 1, false, {Synchronizer{}}};
    s.vars[1].parts[0].compressor = Compressor::fp16;
    s.vars[1].parts[0].algorithm = ArAlgorithm::hierarchical;
    s.vars[1].parts[0].group = 7;
    CHECK(strategy_from_json(strategy_to_json(s), "mem") == s);
  }
}

namespace {
// A valid file for the tiny model on 3 nodes, then one edit that breaks it.
json valid_file() {
  std::vector<Variable> vars = extract_variables(test::tiny_model());
  return strategy_to_json(find_builder("ps_lb").build(vars, test::test_cluster(3, 2)));
}
std::optional<autoddl::InputError> load_error(const json& j) {
  return input_error_of([&] {
    std::vector<Variable> vars = extract_variables(test::tiny_model());
    validate_strategy(strategy_from_json(j, "s.json"), vars, test::test_cluster(3, 2), "s.json");
  });
}
}  // namespace

TEST_CASE("a bad strategy file names the field and the reason", "[sync][json][bad-input]") {
  CHECK_FALSE(load_error(valid_file()));
  struct Case {
    std::function<void(json&)> edit;
    std::string field, reason;
  };
  const std::vector<Case> cases = {
      {[](json& j) { j["vars"][1]["name"] = "fc9.weight"; }, "vars[1].name",
       "unknown variable 'fc9.weight'"},
      {[](json& j) {
         j["vars"][1]["partition"] = {{"axis", 0}, {"shards", 3}};
         j["vars"][1]["parts"] = json::array({j["vars"][1]["parts"][0], j["vars"][1]["parts"][0],
                                              j["vars"][1]["parts"][0]});
       },
       "vars[1].partition.shards",
       "3 shards do not divide axis 0 of 'fc1.weight' (64); set \"uneven\": true for uneven shards"},
      {[](json& j) { j["vars"][2]["parts"][0]["server"] = 3; }, "vars[2].parts[0].server",
       "node 3 does not exist (test has 3 nodes, 0..2)"},
      {[](json& j) { j["vars"][2]["parts"][0]["servr"] = 1; }, "vars[2].parts[0].servr",
       "unknown key"},
      {[](json& j) { j["vars"][2]["parts"][0]["type"] = "sfb"; }, "vars[2].parts[0].type",
       "unknown value 'sfb' (known: ps, all_reduce)"},
      {[](json& j) { j["vars"].erase(4); }, "vars", "variable 'fc2.bias' has no synchronizer"},
      {[](json& j) { j["vars"][4]["name"] = "fc2.weight"; }, "vars[4].name",
       "variable 'fc2.weight' is configured twice"},
      {[](json& j) { j["vars"][0]["partition"] = {{"axis", 2}, {"shards", 2}}; },
       "vars[0].partition.axis", "must be in [0, 2) for 'emb.table' (got 2)"},
      {[](json& j) { j["vars"][0]["parts"] = json::array(); }, "vars[0].parts",
       "has 0 synchronizers for 1 shards"},
      {[](json& j) {
         j["vars"][0]["parts"][0] = {{"type", "all_reduce"}, {"group", 0}, {"algorithm", "ring"}};
         j["vars"][1]["parts"][0] = {{"type", "all_reduce"}, {"group", 0}, {"algorithm", "tree"}};
       },
       "vars[1].parts[0].algorithm",
       "group 0 is one collective but mixes 'ring' (vars[0].parts[0]) and 'tree'"},
      {[](json& j) { j["format"] = "autodist"; }, "format", "must be \"autoddl-sync-strategy\""},
      {[](json& j) { j["vars"][2]["parts"][0]["staleness"] = -1; }, "vars[2].parts[0].staleness",
       "must be >= 0 (got -1)"},
      {[](json& j) { j["vars"][2]["parts"][0]["staleness"] = 1.5; }, "vars[2].parts[0].staleness",
       "must be an integer"},
      {[](json& j) {
         j["vars"][2]["parts"][0]["staleness"] = 2;
         j["vars"][2]["parts"][0]["sync"] = false;
       },
       "vars[2].parts[0].staleness", "a positive staleness needs \"sync\": true (sync false is unbounded already)"},
      {[](json& j) { j["vars"][2]["parts"][0] = {{"type", "all_reduce"}, {"staleness", 1}}; },
       "vars[2].parts[0].staleness", "unknown key"},
  };
  for (const Case& k : cases) {
    json j = valid_file();
    k.edit(j);
    auto e = load_error(j);
    REQUIRE(e);
    CHECK(e->file() == "s.json");
    CHECK(e->field() == k.field);
    CHECK(e->reason() == k.reason);
  }
}

TEST_CASE("uneven shards load when the file says uneven", "[sync][json]") {
  json j = valid_file();
  j["vars"][1]["partition"] = {{"axis", 0}, {"shards", 3}, {"uneven", true}};
  j["vars"][1]["parts"] = json::array({j["vars"][1]["parts"][0], j["vars"][1]["parts"][0],
                                       j["vars"][1]["parts"][0]});
  CHECK_FALSE(load_error(j));
}
