// The AutoSync ranker tasks of a sweep (sync_rank, sync_transfer): their cells and keys, a bad
// field named with its file and path (exit 2 from the CLI), and a tiny sweep over a real dataset
// (NCF on both AutoSync clusters, written by sync/'s dataset writer) that records the fields the
// figure scripts (experiments/figures/sync_ranker_accuracy.py, sync_transfer.py) read.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "../costmodel/input_error.hpp"
#include "autoddl/experiments/config.hpp"
#include "autoddl/sync/dataset.hpp"
#include "sweep_fixture.hpp"

using namespace sweep_test;
using namespace autoddl::experiments;

namespace {

// Two models on the two AutoSync clusters: four pairs. `data` must hold a records.jsonl.
json ranker_config(const std::string& data) {
  json j = json::parse(R"({
    "name": "ranker",
    "models": [{"name": "ncf"}, {"name": "bert", "knobs": {"size": "large"}}],
    "clusters": [{"name": "autosync-a"}, {"name": "autosync-b"}],
    "tasks": [{"sync_rank": {"trials": [10, 20], "rankers": ["linear"]}},
              {"sync_transfer": {"rankers": ["linear"], "finetune": 5}}],
    "seeds": [1, 2]
  })");
  j["tasks"][0]["sync_rank"]["data"] = data;
  j["tasks"][1]["sync_transfer"]["data"] = data;
  return j;
}

// A dataset folder with no records: enough for the loader, which checks only that it exists.
const std::string& empty_dataset() {
  static const std::string d = [] {
    const std::string dir = scratch("sync-data");
    std::ofstream(dir + "/records.jsonl") << "";
    return dir;
  }();
  return d;
}

// The field path a config with `edit` applied is rejected for, and the reason.
std::pair<std::string, std::string> rejected(const std::function<void(json&)>& edit) {
  json j = ranker_config(empty_dataset());
  edit(j);
  auto e = input_error_of([&] { sweep_config_from_json(j, "cfg.json"); });
  REQUIRE(e);
  CHECK(e->file() == "cfg.json");
  return {e->field(), e->reason()};
}

}  // namespace

TEST_CASE("sync_rank is a cell per pair, ranker, trial count and seed, sync_transfer one per other pair to train on",
          "[experiments][sync]") {
  const json j = ranker_config(empty_dataset());
  const std::vector<Cell> cells = expand_cells(sweep_config_from_json(j, "t.json"));
  std::vector<Cell> rank, transfer;
  for (const Cell& c : cells) (c.inputs.at("task") == "sync_rank" ? rank : transfer).push_back(c);
  CHECK(rank.size() == 4u * 2 * 2);      // pairs x trial counts x seeds
  CHECK(transfer.size() == 4u * 3 * 2);  // test pairs x the other pairs x seeds
  std::set<std::string> trained;
  for (const Cell& c : transfer) {
    const std::string test = dataset_pair_key(c.inputs);
    CHECK(c.inputs.at("train") != test);
    trained.insert(c.inputs.at("train").get<std::string>() + " -> " + test);
    CHECK(cell_steps(c.inputs, "/w").empty());  // computed in the worker, no autoddl command
  }
  CHECK(trained.size() == 12u);
  CHECK(trained.count("bert[size=large]@autosync-b -> ncf@autosync-a") == 1);
  CHECK(rank.at(0).inputs.at("options").at("trials") == 10);
  CHECK(rank.at(0).inputs.at("ranker") == "linear");

  // Keys depend on what a cell computes, not on the config's order.
  json reordered = j;
  reordered["tasks"][0]["sync_rank"]["trials"] = json::array({20, 10});
  std::swap(reordered["models"][0], reordered["models"][1]);
  std::swap(reordered["tasks"][0], reordered["tasks"][1]);
  std::set<std::string> a, b;
  for (const Cell& c : cells) a.insert(c.key);
  for (const Cell& c : expand_cells(sweep_config_from_json(reordered, "t.json"))) b.insert(c.key);
  CHECK(a == b);
  // Another number of target trials is another computation.
  json more = j;
  more["tasks"][1]["sync_transfer"]["finetune"] = 10;
  std::set<std::string> c;
  for (const Cell& cell : expand_cells(sweep_config_from_json(more, "t.json"))) c.insert(cell.key);
  CHECK(c.count(rank.at(0).key) == 1);
  CHECK(c.count(transfer.at(0).key) == 0);
}

TEST_CASE("a bad sync_rank or sync_transfer field is named with the reason", "[experiments][sync]") {
  using R = std::pair<std::string, std::string>;
  auto field = [](const std::function<void(json&)>& edit) { return rejected(edit).first; };
  CHECK(field([](json& j) { j["tasks"][0]["sync_rank"]["trials"] = json::array({10, 1}); }) ==
        "tasks[0].sync_rank.trials[1]");
  CHECK(field([](json& j) { j["tasks"][0]["sync_rank"]["rankers"] = "forest"; }) == "tasks[0].sync_rank.rankers[0]");
  CHECK(field([](json& j) { j["tasks"][0]["sync_rank"]["holdout"] = 1; }) == "tasks[0].sync_rank.holdout");
  CHECK(field([](json& j) { j["tasks"][0]["sync_rank"]["finetune"] = 5; }) == "tasks[0].sync_rank.finetune");
  CHECK(field([](json& j) { j["tasks"][1]["sync_transfer"]["finetune"] = 1; }) == "tasks[1].sync_transfer.finetune");
  CHECK(field([](json& j) { j["tasks"][1]["sync_transfer"]["train_trials"] = -3; }) ==
        "tasks[1].sync_transfer.train_trials");
  CHECK(field([](json& j) { j["tasks"][1]["mesh"] = "2x2"; }) == "tasks[1].mesh");
  CHECK(field([](json& j) { j["tasks"][0]["sync_rank"].erase("data"); }) == "tasks[0].sync_rank.data");
  CHECK(rejected([](json& j) { j["tasks"][1]["sync_transfer"]["data"] = "/nonexistent/ds"; }) ==
        R{"tasks[1].sync_transfer.data",
          "no records.jsonl in '/nonexistent/ds' (write it with `autoddl sync dataset --out /nonexistent/ds --pairs ...` first)"});
  // Records exist at the preset's size only; transfer needs a pair to train on besides the one tested.
  CHECK(field([](json& j) { j["clusters"][1]["nodes"] = json::array({2}); }) == "clusters[1]");
  CHECK(field([](json& j) {
          j["models"] = json::parse(R"([{"name": "ncf"}])");
          j["clusters"] = json::parse(R"([{"name": "autosync-a"}])");
        }) == "tasks[1].sync_transfer");
}

TEST_CASE("a bad sync_rank field stops `autoddl sweep run` with one line naming the file and field, exit 2",
          "[experiments][sync]") {
  const std::string d = scratch("sync-bad");
  json j = ranker_config(empty_dataset());
  j["tasks"][0]["sync_rank"]["trials"] = json::array({0});
  const std::string cfg = write_config(d, j);
  CHECK(run_autoddl({"sweep", "run", cfg, "--out", d + "/out"}, d + "/log") == 2);
  CHECK(read_all(d + "/log") == "autoddl: error: " + cfg +
                                    ": tasks[0].sync_rank.trials[0]: must be an integer from 2 to 100000 (a ranker "
                                    "needs two trials to order)\n");
  CHECK_FALSE(fs::exists(d + "/out/results.jsonl"));  // no cell ran
  fs::remove_all(d);
}

TEST_CASE("a tiny ranker sweep over a real dataset records the metrics the figures read, too few records fail the cell",
          "[experiments][sync]") {
  const std::string d = scratch("sync-run");
  autoddl::sync::DatasetOptions o;
  o.per_pair = 30;
  autoddl::sync::write_dataset(d + "/data", {{"ncf", {}, "autosync-a"}, {"ncf", {}, "autosync-b"}}, o);
  json j = ranker_config(d + "/data");
  j["models"] = json::parse(R"([{"name": "ncf"}])");
  j["tasks"][0]["sync_rank"]["trials"] = json::array({5, 20, 25});  // 30 records: 6 held out, 24 to train on
  j["tasks"][1]["sync_transfer"]["train_trials"] = 20;
  j["seeds"] = json::array({1});
  const std::string cfg = write_config(d, j);
  REQUIRE(run_autoddl({"sweep", "run", cfg, "--out", d + "/out"}, d + "/log") == 0);
  const auto rows = comparable_rows(d + "/out");
  REQUIRE(rows.size() == 2u * 3 + 2u);  // 2 pairs x 3 trial counts; each pair trained on the other
  int failed = 0, transfers = 0;
  for (const auto& [key, r] : rows) {
    INFO(r.dump());
    const json& in = r["inputs"];
    if (in["task"] == "sync_rank") {
      if (in["options"]["trials"] == 25) {
        ++failed;
        CHECK(r["status"] == "failed");
        CHECK(r["error"].get<std::string>().find("has 24 records besides the held-out ones; the cell trains on 25") !=
              std::string::npos);
        continue;
      }
      REQUIRE(r["status"] == "ok");
      const json& s = r["results"]["sync_rank"];
      CHECK(s["pair"] == dataset_pair_key(in));
      CHECK(s["trials"] == in["options"]["trials"]);
      CHECK(s["held_out"] == 6);
      CHECK(s["held_out_metrics"]["pairs"].get<int>() > 0);
      for (const char* m : {"pairwise_accuracy", "gap_pairwise_accuracy"}) {
        CHECK(s["held_out_metrics"][m].get<double>() >= 0);
        CHECK(s["held_out_metrics"][m].get<double>() <= 1);
      }
      CHECK(s["held_out_metrics"]["top1_regret"].get<double>() >= 0);
      CHECK(s["top5_hit"].is_boolean());
    } else {
      ++transfers;
      REQUIRE(r["status"] == "ok");
      const json& t = r["results"]["sync_transfer"];
      CHECK(t["test_pair"] == dataset_pair_key(in));
      CHECK(t["train_pair"] == in["train"]);
      CHECK(t["train_records"] == 20);  // train_trials of the other pair's 30
      CHECK(t["finetune_records"] == 5);
      CHECK(t["test_records"] == 25);
      for (const char* v : {"transferred", "target_only", "finetuned"}) {
        CHECK(t[v]["pairwise_accuracy"].get<double>() > 0);
        CHECK(t[v]["pairs"].get<int>() > 0);
      }
    }
  }
  CHECK(failed == 2);
  CHECK(transfers == 2);
  fs::remove_all(d);
}
