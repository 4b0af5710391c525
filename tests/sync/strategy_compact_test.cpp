// The compact strategy form of `sync search --json` reports: every builder's strategy, and one
// with every synchronizer field set, comes back equal; a report's run gives its strategy back.
#include "autoddl/sync/strategy_compact.hpp"

#include <catch2/catch.hpp>

#include "../costmodel/input_error.hpp"
#include "autoddl/sync/builders.hpp"
#include "autoddl/sync/strategy_json.hpp"
#include "tiny.hpp"

using namespace autoddl::sync;
using namespace autoddl::costmodel;
using nlohmann::json;

namespace {

std::vector<std::string> names_of(const std::vector<Variable>& vars) {
  std::vector<std::string> out;
  for (const Variable& v : vars) out.push_back(v.name);
  return out;
}

}  // namespace

TEST_CASE("strategies round-trip through the compact report form", "[sync][compact]") {
  const std::vector<Variable> vars = extract_variables(test::tiny_model());
  const ClusterSpec c = test::test_cluster(3, 2);
  for (const BuilderInfo& b : builders()) {
    INFO(b.name);
    const Strategy s = b.build(vars, c);
    CHECK(strategy_from_compact(json::parse(strategy_to_compact(s, vars).dump()), names_of(vars), "mem", "s") == s);
  }
  Strategy s = find_builder("partitioned_ps").build(vars, c);
  s.vars[0].parts[1].local_replication = true;
  s.vars[0].parts[0].sync = false;
  s.vars[2].parts[0] = Synchronizer{.group = 5, .compressor = Compressor::fp16, .algorithm = ArAlgorithm::hierarchical};
  s.vars[1].parts[0] = Synchronizer{.arch = Arch::ps, .server = 1, .staleness = 4};
  const json compact = strategy_to_compact(s, vars);
  CHECK(compact["vars"][2]["parts"][0] == "ar:5:fp16:hierarchical");
  CHECK(compact["vars"][0]["parts"][0] == "ps:0:async");
  CHECK(compact["vars"][1]["parts"][0] == "ps:1:stale4");
  CHECK(strategy_from_compact(compact, names_of(vars), "mem", "s") == s);
  json bad = compact;
  bad["vars"][2]["parts"][0] = "ar:5:lz4";
  CHECK_INPUT_ERROR(strategy_from_compact(bad, names_of(vars), "r.json", "strategies.list[0]"), "strategies.list[0].vars[2].parts[0]",
                    "unknown flag 'lz4'");
}

TEST_CASE("a search report gives back each run's strategy", "[sync][compact]") {
  const std::vector<Variable> vars = extract_variables(test::tiny_model());
  const ClusterSpec c = test::test_cluster(3, 2);
  const Strategy ps = find_builder("ps").build(vars, c), ar = find_builder("all_reduce").build(vars, c);
  json names = json::array();
  for (const Variable& v : vars) names.push_back(v.name);
  const json report = {
      {"best", {{"strategy", strategy_to_json(ar)}}},
      {"runs", {{{"strategy", 1}}, {{"strategy", 0}}, {{"strategy", 1}}}},
      {"strategies",
       {{"format", kCompactStrategiesFormat}, {"variables", names},
        {"list", {strategy_to_compact(ps, vars), strategy_to_compact(ar, vars)}}}}};
  REQUIRE(is_search_report(report));
  CHECK(strategy_from_search_report(report, 1, "r.json").vars == ps.vars);
  CHECK(strategy_from_search_report(report, 2, "r.json").vars == ar.vars);
  CHECK(strategy_from_search_report(report, -1, "r.json") == ar);
  CHECK_INPUT_ERROR(strategy_from_search_report(report, 3, "r.json"), "runs", "has no run 3 (the report has 3)");
}
