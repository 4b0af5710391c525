// Matrix expansion: one cell per combination, keys that depend on a cell's inputs only (not on
// the config's order), and shards that split the cells deterministically and completely.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/experiments/matrix.hpp"

using namespace autoddl::experiments;
using nlohmann::json;

namespace {

json base() {
  return json::parse(R"({
    "name": "t",
    "models": [{"name": "mlp", "knobs": {"layers": [2, 4, 8], "hidden": [256, 512]}}],
    "clusters": [{"name": "dgx-a100", "gpus": [2, 8, 16]}, {"name": "piz-daint", "nodes": [2, 4]}],
    "tasks": [{"search": ["cd-nbh", "cd,ilp"]},
              {"schemes": ["dp", "zero3", "megatron:tp=2,pp=1,dp={gpus/2}"], "evaluators": ["analytical", "sim"]}],
    "seeds": [1, 2],
    "repetitions": 2
  })");
}

std::set<std::string> keys_of(const std::vector<Cell>& cells) {
  std::set<std::string> k;
  for (const Cell& c : cells) k.insert(c.key);
  return k;
}

}  // namespace

TEST_CASE("the matrix has one cell per combination and each cell has its own key", "[experiments][matrix]") {
  const auto cells = expand_cells(sweep_config_from_json(base(), "t.json"));
  // 6 knob combinations x 5 cluster sizes x (2 methods x 2 seeds + 3 schemes x 2 evaluators) x 2 reps
  CHECK(cells.size() == 6u * 5 * (2 * 2 + 3 * 2) * 2);
  CHECK(keys_of(cells).size() == cells.size());
  for (const Cell& c : cells) {
    CHECK(c.key.size() == 16);
    CHECK(c.key == cell_key(c.inputs));
    CHECK(c.error.empty());
  }
}

TEST_CASE("cell keys do not depend on the order of the config's lists", "[experiments][matrix]") {
  json shuffled = base();
  std::reverse(shuffled["models"][0]["knobs"]["layers"].begin(), shuffled["models"][0]["knobs"]["layers"].end());
  std::reverse(shuffled["clusters"].begin(), shuffled["clusters"].end());
  std::reverse(shuffled["tasks"].begin(), shuffled["tasks"].end());
  std::reverse(shuffled["seeds"].begin(), shuffled["seeds"].end());
  // knob objects in another order of keys
  shuffled["models"][0]["knobs"] = json::parse(R"({"hidden": [512, 256], "layers": [8, 2, 4]})");
  const auto a = expand_cells(sweep_config_from_json(base(), "t.json"));
  const auto b = expand_cells(sweep_config_from_json(shuffled, "u.json"));
  CHECK(keys_of(a) == keys_of(b));
}

TEST_CASE("a cell's key changes when anything it computes changes", "[experiments][matrix]") {
  const auto a = expand_cells(sweep_config_from_json(base(), "t.json"));
  json other = base();
  other["tasks"][0]["time_limit_s"] = 7;  // search cells differ, scheme cells do not
  const auto b = expand_cells(sweep_config_from_json(other, "t.json"));
  const auto ka = keys_of(a), kb = keys_of(b);
  int same = 0;
  for (const std::string& k : kb) same += ka.count(k) ? 1 : 0;
  CHECK(same == 6 * 5 * 3 * 2 * 2);  // exactly the scheme cells kept their keys
}

TEST_CASE("placeholders are filled per cluster size and an inexact division fails that cell only", "[experiments][matrix]") {
  const auto cells = expand_cells(sweep_config_from_json(base(), "t.json"));
  std::map<int, std::string> megatron_by_gpus;
  int failing = 0;
  for (const Cell& c : cells) {
    if (c.inputs.value("scheme", "").rfind("megatron", 0) != 0) continue;
    megatron_by_gpus[c.inputs["gpus"].get<int>()] = c.inputs["scheme"].get<std::string>();
    failing += c.error.empty() ? 0 : 1;
  }
  CHECK(megatron_by_gpus.at(16) == "megatron:tp=2,pp=1,dp=8");
  CHECK(megatron_by_gpus.at(2) == "megatron:tp=2,pp=1,dp=1");
  CHECK(failing == 0);
  json odd = base();
  odd["clusters"] = json::parse(R"([{"name": "piz-daint", "nodes": [3, 4]}])");
  int errors = 0;
  for (const Cell& c : expand_cells(sweep_config_from_json(odd, "t.json"))) errors += c.error.empty() ? 0 : 1;
  CHECK(errors == 6 * 2 * 2);  // at 3 GPUs: 6 knob combinations x 2 evaluators x 2 reps
}

TEST_CASE("shards split the cells into disjoint and complete and repeatable parts", "[experiments][matrix]") {
  const auto cells = expand_cells(sweep_config_from_json(base(), "t.json"));
  for (int n : {1, 2, 3, 7}) {
    std::set<std::string> seen;
    size_t total = 0;
    for (int i = 0; i < n; ++i) {
      const auto part = shard_cells(cells, i, n);
      CHECK(part.size() >= cells.size() / n);
      CHECK(part.size() <= cells.size() / n + 1);
      CHECK(keys_of(shard_cells(cells, i, n)) == keys_of(part));
      for (const Cell& c : part) seen.insert(c.key);
      total += part.size();
    }
    CHECK(total == cells.size());
    CHECK(seen == keys_of(cells));
  }
  // The same shard of a reordered config is the same set of cells.
  json shuffled = base();
  std::reverse(shuffled["clusters"].begin(), shuffled["clusters"].end());
  CHECK(keys_of(shard_cells(expand_cells(sweep_config_from_json(shuffled, "t.json")), 1, 3)) ==
        keys_of(shard_cells(cells, 1, 3)));
}

TEST_CASE("the shard option takes I/N with 0 <= I < N", "[experiments][matrix]") {
  int i = -1, n = -1;
  parse_shard("3/4", i, n);
  CHECK(i == 3);
  CHECK(n == 4);
  for (const char* bad : {"4/4", "1", "a/2", "-1/2", "0/0", "1/2/3"}) {
    CHECK_THROWS_AS(parse_shard(bad, i, n), autoddl::InputError);
  }
}

TEST_CASE("a cell's steps are the autoddl commands that compute it", "[experiments][matrix]") {
  json in = {{"model", "gpt"}, {"knobs", {{"layers", "2"}}}, {"cluster", "dgx-a100"}, {"nodes", 2}, {"gpus", 16},
             {"task", "search"}, {"method", "cd-nbh"}, {"evaluator", "sim"},
             {"options", {{"time_limit_s", 5.0}, {"restarts", 2}, {"tie_layers", false}, {"fidelity", "flow"}}},
             {"seed", 3}, {"rep", 0}};
  const auto steps = cell_steps(in, "/w");
  REQUIRE(steps.size() == 2);  // search writes the best scheme, simulate runs it
  CHECK(steps[0].name == "search");
  CHECK(std::find(steps[0].args.begin(), steps[0].args.end(), "/w/scheme.json") != steps[0].args.end());
  CHECK(std::find(steps[0].args.begin(), steps[0].args.end(), "3") != steps[0].args.end());
  CHECK(steps[1].name == "simulate");
  CHECK(std::find(steps[1].args.begin(), steps[1].args.end(), "/w/scheme.json") != steps[1].args.end());
  in["task"] = "scheme";
  in["scheme"] = "dp";
  in["evaluator"] = "analytical";
  const auto cost = cell_steps(in, "/w");
  REQUIRE(cost.size() == 1);
  CHECK(cost[0].args[0] == "cost");
}

TEST_CASE("a sync_search task is one seeded cell per model and cluster running autoddl sync search",
          "[experiments][matrix]") {
  json j = base();
  j["tasks"] = json::parse(R"([{"sync_search": {"trials": 50}}])");
  const auto cells = expand_cells(sweep_config_from_json(j, "t.json"));
  CHECK(cells.size() == 6u * 5 * 2 * 2);  // knob combinations x cluster sizes x seeds x repetitions
  const Cell& c = cells.at(0);
  CHECK(c.inputs.at("task") == "sync_search");
  CHECK(c.inputs.at("evaluator") == "sim");
  const auto steps = cell_steps(c.inputs, "/w");
  REQUIRE(steps.size() == 1);
  const std::vector<std::string>& a = steps[0].args;
  CHECK(steps[0].name == "sync_search");
  CHECK(a[0] == "sync");
  CHECK(a[1] == "search");
  CHECK(std::find(a.begin(), a.end(), "--trials") + 1 == std::find(a.begin(), a.end(), "50"));
  CHECK(std::find(a.begin(), a.end(), "/w/sync_search.json") != a.end());
  // More trials is another computation: another key.
  j["tasks"][0]["sync_search"]["trials"] = 60;
  CHECK(expand_cells(sweep_config_from_json(j, "t.json")).at(0).key != c.key);
  // Fields of the SBP tasks do not apply; trials must be a positive integer.
  for (const char* bad : {R"({"sync_search": {}, "mesh": "2x8"})", R"({"sync_search": {"trials": 0}})",
                          R"({"sync_search": {"trials": 1.5}})", R"({"sync_search": {}, "search": ["cd"]})"}) {
    INFO(bad);
    j["tasks"][0] = json::parse(bad);
    CHECK_THROWS_AS(sweep_config_from_json(j, "t.json"), autoddl::InputError);
  }
}

TEST_CASE("the cell count is known before expanding and equals the expansion", "[experiments][matrix]") {
  CHECK(count_cells(sweep_config_from_json(base(), "t.json")) == 6 * 5 * (2 * 2 + 3 * 2) * 2);
  // The shipped configs, sync tasks included (sync_rank's trial counts, sync_transfer's pairs).
  const std::string dir = std::string(AUTODDL_SOURCE_DIR) + "/experiments/configs/";
  for (const char* name : {"autoddl_transformer.json", "autosync.json", "autosync_ranker.json", "autosync_transfer.json",
                           "autosync_ablation.json", "autosync_ablation_subset.json", "sim_vs_analytical.json"}) {
    INFO(name);
    json j = autoddl::read_json_file(dir + name);
    for (json& t : j["tasks"]) {  // a dataset folder the test does not have: any folder with records
      for (const char* kind : {"sync_rank", "sync_transfer"}) {
        if (t.contains(kind)) t[kind]["data"] = std::string(AUTODDL_SOURCE_DIR) + "/tests/cli/data/sync/tiny_dataset";
      }
    }
    const SweepConfig c = sweep_config_from_json(j, name);
    CHECK(count_cells(c) == static_cast<int64_t>(expand_cells(c).size()));
  }
}

TEST_CASE("a config of more cells than the limit stops before anything is expanded or built", "[experiments][matrix]") {
  json j = base();  // 600 cells
  j["repetitions"] = 1000000;
  auto error_of = [&](bool allow_large) {
    try {
      sweep_config_from_json(j, "t.json", allow_large);
    } catch (const autoddl::InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error_of(false) == "t.json: expands to 300000000 cells, more than 100000 (the limit of a sweep; "
                           "`sweep run --allow-large` lifts it to 10000000)");
  CHECK(error_of(true) == "t.json: expands to 300000000 cells, more than 10000000 (the limit even with --allow-large; "
                          "split the sweep)");
  j["repetitions"] = 200;  // 60,000 cells: under the limit
  CHECK(error_of(false).empty());
  j["repetitions"] = 1000;  // 300,000: only with --allow-large
  CHECK(!error_of(false).empty());
  CHECK(error_of(true).empty());
  // A knob x seed product of 10^9 cells: counted, not enumerated (the loader would build every
  // knob combination first).
  json k = base();
  json values = json::array();
  for (uint64_t v = 1; v <= 1000; ++v) values.push_back(v);  // unsigned, as parsed from a file
  k["models"][0]["knobs"] = {{"layers", values}, {"hidden", values}};
  k["seeds"] = values;
  const auto start = std::chrono::steady_clock::now();
  try {
    sweep_config_from_json(k, "k.json", true);
    FAIL("no error");
  } catch (const autoddl::InputError& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find("k.json: expands to ") == 0);
  }
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
}

TEST_CASE("a cell's estimate is its time limit, its trials or a nominal few seconds", "[experiments][matrix]") {
  for (const Cell& c : expand_cells(sweep_config_from_json(base(), "t.json"))) {
    const double s = estimated_cell_s(c.inputs);
    if (c.inputs["task"] == "search") CHECK(s == 60);
    else CHECK(s == Approx(c.inputs["evaluator"] == "sim" ? 2.1 : 0.1));
  }
  CHECK(estimated_cell_s({{"task", "sync_search"}, {"options", {{"trials", 50}}}}) == Approx(50 * kSyncTrialS));
}

TEST_CASE("sync_search arms expand to one cell per arm ranker and neighbours value", "[experiments][matrix]") {
  json j = base();
  j["models"] = json::parse(R"([{"name": "mlp"}])");
  j["clusters"] = json::parse(R"([{"name": "dgx-a100", "gpus": [8]}])");
  j["repetitions"] = 1;
  j["tasks"] = json::parse(R"([{"sync_search": {"trials": 50}}])");
  const std::string plain_key = expand_cells(sweep_config_from_json(j, "t.json")).at(0).key;
  j["tasks"][0]["sync_search"]["arms"] = json::parse(R"(["ranker", "random", "analytical"])");
  j["tasks"][0]["sync_search"]["rankers"] = json::parse(R"(["linear", "xgboost"])");
  j["tasks"][0]["sync_search"]["neighbours"] = json::parse("[true, false]");
  const SweepConfig cfg = sweep_config_from_json(j, "t.json");
  const auto cells = expand_cells(cfg);
  // (2 ranker arms + random + analytical) x 2 neighbours values x 2 seeds
  CHECK(cells.size() == 4u * 2 * 2);
  CHECK(count_cells(cfg) == static_cast<int64_t>(cells.size()));
  std::map<std::string, int> arms;
  for (const Cell& c : cells) {
    const std::string arm = c.inputs.at("arm");
    arms[arm + "/" + c.inputs.value("ranker", "-")] += 1;
    CHECK(c.key != plain_key);
    const auto a = cell_steps(c.inputs, "/w").at(0).args;
    CHECK(std::find(a.begin(), a.end(), "--arm") + 1 == std::find(a.begin(), a.end(), arm));
    const bool sampler_only = std::find(a.begin(), a.end(), "--sampler-only") != a.end();
    CHECK(sampler_only == !c.inputs.at("options").at("neighbours").get<bool>());
  }
  // The random arm's shadow ranker is the first ranker; the analytical arm has none.
  CHECK(arms == std::map<std::string, int>{{"ranker/linear", 4}, {"ranker/xgboost", 4}, {"random/linear", 4},
                                            {"analytical/-", 4}});
  // Without arms a cell keeps the inputs (and key) it had before arms existed.
  j["tasks"][0]["sync_search"] = json::parse(R"({"trials": 50})");
  const Cell plain = expand_cells(sweep_config_from_json(j, "t.json")).at(0);
  CHECK(plain.key == plain_key);
  CHECK_FALSE(plain.inputs.contains("arm"));
  // rankers or neighbours without arms, an unknown arm or ranker, a neighbours value not a boolean
  for (const char* bad : {R"({"sync_search": {"rankers": ["linear"]}})", R"({"sync_search": {"neighbours": [true]}})",
                          R"({"sync_search": {"arms": ["greedy"]}})", R"({"sync_search": {"arms": []}})",
                          R"({"sync_search": {"arms": ["ranker"], "rankers": ["forest"]}})",
                          R"({"sync_search": {"arms": ["random"], "neighbours": ["yes"]}})"}) {
    INFO(bad);
    j["tasks"][0] = json::parse(bad);
    CHECK_THROWS_AS(sweep_config_from_json(j, "t.json"), autoddl::InputError);
  }
}
