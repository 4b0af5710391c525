// refeature_dataset: a record's features recomputed from its strategy, labels untouched.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/zoo.hpp"
#include "autoddl/sync/analytical.hpp"
#include "autoddl/sync/builders.hpp"
#include "autoddl/sync/dataset.hpp"
#include "autoddl/sync/features.hpp"
#include "autoddl/sync/strategy_json.hpp"
#include "autoddl/sync/workload.hpp"

using namespace autoddl;
using namespace autoddl::sync;
namespace fs = std::filesystem;

TEST_CASE("refeature_dataset recomputes stale features from the strategy and keeps the label", "[sync][dataset]") {
  const fs::path dir = fs::temp_directory_path() / "autoddl_test_refeature";
  fs::remove_all(dir);
  fs::create_directories(dir);
  costmodel::ClusterSpec c = costmodel::resolve_cluster("autosync-a");
  // The record names no batch (written before AutoSync's workloads): it is priced at them.
  costmodel::Graph g = costmodel::build_zoo_model("ncf", sync_workload("ncf", {}, c).knobs);
  std::vector<Variable> vars = extract_variables(g);
  Strategy s = find_builder("parallax").build(vars, c);
  nlohmann::json rec = {{"key", "ncf@autosync-a#6"}, {"pair", "ncf@autosync-a"}, {"model", "ncf"},
                        {"knobs", nlohmann::json::object()}, {"cluster", "autosync-a"}, {"index", 6},
                        {"builder", "parallax"}, {"strategy", strategy_to_json(s)},
                        {"features", {1.0, 2.0, 3.0}}, {"analytical_iteration_s", 9.0}, {"runtime_s", 0.125}};
  std::ofstream(dir / "records.jsonl") << rec.dump() << "\n";
  CHECK(refeature_dataset(dir.string()) == 1);
  std::ifstream in(dir / "records.jsonl");
  std::string line;
  REQUIRE(std::getline(in, line));
  nlohmann::json j = nlohmann::json::parse(line);
  const Evaluation e = evaluate_analytical(g, vars, s, c);
  CHECK(j["features"].get<std::vector<double>>() == strategy_features(vars, s, e, c));
  CHECK(j["analytical_iteration_s"].get<double>() == e.iteration_s);
  CHECK(j["runtime_s"].get<double>() == 0.125);
  CHECK(fs::exists(dir / "schema.json"));

  // a strategy that names a variable the model does not have: an InputError, the file unchanged
  rec["strategy"]["vars"][0]["name"] = "no.such.weight";
  std::ofstream(dir / "records.jsonl") << rec.dump() << "\n";
  CHECK_THROWS_AS(refeature_dataset(dir.string()), InputError);
  std::ifstream again(dir / "records.jsonl");
  REQUIRE(std::getline(again, line));
  CHECK(nlohmann::json::parse(line)["features"].size() == 3);
  fs::remove_all(dir);
}
