// End to end through run_search and the CLI: every returned scheme re-costs (evaluate, and a
// scheme JSON round trip through `autoddl cost`) to its reported time, every searched scheme is
// feasible, the ILP's bound is below every table objective, a tight GPU makes the search turn
// to recompute or micro-batches and still fit, a pipeline dim gets a stage partition, the seed
// makes runs reproducible, and unknown methods are input errors.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>

#include "../costmodel/input_error.hpp"
#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/scheme_json.hpp"
#include "autoddl/search/searcher.hpp"
#include "fixtures.hpp"

using namespace search_fixtures;

namespace {

bool searched(const std::string& m) { return m == "cd" || m == "cd-nbh" || m == "cd-mesh" || m == "ilp" || m == "chain-dp"; }

void check_recosts(const Graph& g, const ClusterSpec& c, const SearchResult& r) {
  INFO(r.method);
  if (!r.unavailable.empty()) {
    CHECK_FALSE(r.report.feasible);
    CHECK_FALSE(searched(r.method));
    return;
  }
  const CostReport again = evaluate(g, c, r.scheme);
  CHECK(again.iteration_s == r.report.iteration_s);
  const Scheme loaded = scheme_from_json(scheme_to_json(r.scheme, g), g, c, "round trip");
  CHECK(evaluate(g, c, loaded).iteration_s == Approx(r.report.iteration_s).epsilon(1e-12));
  if (searched(r.method)) CHECK(r.report.feasible);
}

}  // namespace

TEST_CASE("every method's scheme is feasible where searched and re-costs to its reported time", "[search][e2e]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const Graph g = tiny_gpt();
  SearchOptions o;
  o.mesh_shape = {2, 4};
  o.time_limit_s = 30;
  const SearchRun run = run_search(g, c, o, {"all"});
  std::set<std::string> methods;
  for (const SearchResult& r : run.results) {
    methods.insert(r.method);
    check_recosts(g, c, r);
  }
  for (const char* m : {"cd", "cd-nbh", "cd-mesh", "ilp", "dp", "zero1", "zero3", "megatron"}) CHECK(methods.count(m));
  REQUIRE(run.ilp_bound_s);
  for (const SearchResult& r : run.results) {
    if (r.objective_s) CHECK(*run.ilp_bound_s <= *r.objective_s * (1 + 1e-9));
  }
  // Ranked: feasible first, then by iteration time.
  for (size_t i = 1; i < run.results.size(); ++i) {
    const auto& a = run.results[i - 1].report;
    const auto& b = run.results[i].report;
    CHECK((a.feasible > b.feasible || (a.feasible == b.feasible && a.iteration_s <= b.iteration_s)));
  }
  // chain-dp declines a transformer (residuals), with a reason.
  bool skipped_dp = false;
  for (const auto& [m, why] : run.skipped) skipped_dp |= m == "chain-dp" && !why.empty();
  CHECK(skipped_dp);
}

TEST_CASE("on a GPU too small for one micro-batch the search recomputes or accumulates and still fits",
          "[search][e2e]") {
  ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const Graph g = tiny_gpt(2, 64);
  SearchOptions o;
  o.mesh_shape = {8};
  o.random_restarts = 0;
  const SearchRun roomy = run_search(g, c, o, {"cd"});
  REQUIRE(roomy.results.at(0).report.feasible);
  CHECK(roomy.config["micro_batches"] == 1);
  CHECK(roomy.config["recompute"] == "none");
  c.gpu.memory_bytes = 0.6 * roomy.results[0].report.peak_memory_bytes;
  c.gpu.memory_reserve_bytes = 0;  // a GPU of a few MB: the preset's GB-sized reserve would leave nothing
  const SearchRun tight = run_search(g, c, o, {"cd"});
  const SearchResult& r = tight.results.at(0);
  CHECK(r.report.feasible);
  CHECK((tight.config["micro_batches"] != 1 || tight.config["recompute"] != "none" ||
         r.report.peak_memory_bytes < roomy.results[0].report.peak_memory_bytes));
  check_recosts(g, c, r);
}

TEST_CASE("with a pipeline dim the search partitions layers into stages and the scheme re-costs", "[search][pipeline]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const Graph g = tiny_gpt(4, 16);
  SearchOptions o;
  o.mesh_shape = {2, 4};
  o.pipeline_dim = 0;
  o.random_restarts = 0;
  const SearchRun run = run_search(g, c, o, {"cd-nbh"});
  const SearchResult& r = run.results.at(0);
  check_recosts(g, c, r);
  CHECK(r.scheme.stages() == 2);
  CHECK(r.scheme.micro_batches >= 2);
  REQUIRE(r.scheme.op_chunk.size() == g.ops.size());
  CHECK(r.scheme.op_chunk.front() == 0);
  CHECK(r.scheme.op_chunk.back() % 2 == 1);  // the last chunk on the last stage (1F1B or interleaved)
  for (size_t i = 1; i < g.ops.size(); ++i) CHECK(r.scheme.op_chunk[i] >= r.scheme.op_chunk[i - 1]);
  CHECK(r.report.bubble_s > 0);
}

TEST_CASE("the same seed gives the same search, a different seed other random restarts", "[search][e2e]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const Graph g = tiny_gpt();
  SearchOptions o;
  o.mesh_shape = {2, 4};
  o.seed = 42;
  const SearchRun a = run_search(g, c, o, {"cd"}), b = run_search(g, c, o, {"cd"});
  CHECK(a.results[0].report.iteration_s == b.results[0].report.iteration_s);
  REQUIRE(a.results[0].details["seeds"].size() == b.results[0].details["seeds"].size());
  for (size_t i = 0; i < a.results[0].details["seeds"].size(); ++i) {
    nlohmann::json x = a.results[0].details["seeds"][i], y = b.results[0].details["seeds"][i];
    x.erase("seconds");
    y.erase("seconds");
    CHECK(x == y);
  }
  o.seed = 7;
  const SearchRun other = run_search(g, c, o, {"cd"});
  bool moved = false;
  for (const auto& s : other.results[0].details["seeds"]) moved |= s["seed"] == "random:7";
  CHECK(moved);
  bool echoed = false;
  for (const auto& s : a.results[0].details["seeds"]) echoed |= s["seed"] == "random:42";
  CHECK(echoed);
}

TEST_CASE("an unknown method is an input error naming --method and the known ones", "[search][e2e]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const Graph g = chain_graph();
  auto e = input_error_of([&] { run_search(g, c, {}, {"annealing"}); });
  REQUIRE(e);
  CHECK(e->file() == "--method");
  CHECK(e->reason().find("cd-nbh") != std::string::npos);
  for (const Searcher& s : searchers()) {
    CHECK(!s.name.empty());
    CHECK(!s.help.empty());
    CHECK(find_searcher(s.name) == &s);
  }
}

TEST_CASE("autoddl search --out writes a scheme that autoddl cost re-costs to the same time", "[search][cli]") {
  const std::string dir = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/autoddl_search_test";
  std::system(("mkdir -p " + dir).c_str());
  const std::string bin = AUTODDL_BINARY;
  const std::string model = " --model gpt --set layers=2,hidden=256,heads=8,seq=128,vocab=1024 --cluster dgx-a100 --nodes 1";
  const std::string search = bin + " search" + model + " --mesh 2x4 --method cd-nbh,dp --explain --out " + dir +
                             "/s.json --json " + dir + "/r.json > " + dir + "/out.txt 2>&1";
  REQUIRE(std::system(search.c_str()) == 0);
  const std::string cost = bin + " cost" + model + " --scheme " + dir + "/s.json --json " + dir + "/c.json > /dev/null";
  REQUIRE(std::system(cost.c_str()) == 0);
  const nlohmann::json r = autoddl::read_json_file(dir + "/r.json");
  const nlohmann::json c = autoddl::read_json_file(dir + "/c.json");
  CHECK(c["iteration_s"].get<double>() == Approx(r["best"]["iteration_s"].get<double>()).epsilon(1e-12));
  for (const auto& x : r["results"]) {
    CHECK(x.contains("method"));
    CHECK(x.contains("iteration_s"));
    CHECK(x.contains("feasible"));
    CHECK(x.contains("search_s"));
  }
  CHECK(r["seed"] == 1);
  std::ifstream out(dir + "/out.txt");
  const std::string text((std::istreambuf_iterator<char>(out)), std::istreambuf_iterator<char>());
  CHECK(text.find("explain cd-nbh") != std::string::npos);
  // One row per layer, or one folded row when both layers cost the same (the first layer's input
  // boxing from the embeddings can differ from the second's, so either is right).
  CHECK(text.find("layer.0") != std::string::npos);
  CHECK(text.find("layer.1") != std::string::npos);
}

TEST_CASE("data parallel with fewer samples than GPUs is an infeasible result with its reason, not an error",
          "[search][e2e]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph g = tiny_gpt(2, 8);
  SearchOptions o;
  o.mesh_shape = {2, 8};
  const SearchRun run = run_search(g, c, o, {"dp", "cd"});
  REQUIRE(run.results.size() == 2);
  CHECK(run.results[0].method == "cd");
  CHECK(run.results[0].report.feasible);
  const SearchResult& dp = run.results[1];
  CHECK(dp.method == "dp");
  CHECK_FALSE(dp.report.feasible);
  CHECK(dp.unavailable.find("does not split over 16") != std::string::npos);
}

TEST_CASE("cd and cd-nbh are never slower by evaluate than any seed they start from, nor end worse in objective",
          "[search][cd][e2e]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const Graph g = build_zoo_model("vgg16", {{"batch", "16"}, {"image", "64"}});
  SearchOptions o;
  o.mesh_shape = {2, 4};
  for (const char* m : {"cd", "cd-nbh"}) {
    const SearchRun run = run_search(g, c, o, {m});
    const SearchResult& r = run.results.at(0);
    bool owt = false;
    for (const auto& s : r.details["seeds"]) {
      INFO(m << " from " << s["seed"]);
      owt |= s["seed"] == "owt";
      CHECK(s["objective_s"].get<double>() <= s["start_objective_s"].get<double>());
      if (s["start_feasible"].get<bool>()) CHECK(r.report.iteration_s <= s["start_iteration_s"].get<double>());
      if (s["feasible"].get<bool>()) CHECK(r.report.iteration_s <= s["iteration_s"].get<double>());
    }
    CHECK(owt);  // a CNN gets the one-weird-trick seed
  }
}

TEST_CASE("the searched scheme is never slower than the expert baselines whose layouts it seeds from",
          "[search][e2e]") {
  // The experts run data parallel and owt with replicated optimizer state; the search's tables
  // shard it (ZeRO-1) to fit, whose exposed all-gather after the step lost 0.6-1.1% to both
  // on piz-daint until the configuration also tried the state replicated (docs/figures.md).
  struct Case {
    const char* model;
    const char* batch;
    const char* cluster;
    int nodes;
    const char* expert;  // besides dp
  };
  for (const Case& k : {Case{"vgg16", "128", "piz-daint", 4, "owt"}, Case{"gpt", "16", "piz-daint", 4, "megatron"},
                        Case{"bert", "16", "piz-daint", 4, "megatron"}}) {
    INFO(k.model << " on " << k.nodes << " " << k.cluster);
    const ClusterSpec c = resolve_cluster(k.cluster, k.nodes);
    const Graph g = build_zoo_model(k.model, {{"batch", k.batch}});
    SearchOptions o;
    o.time_limit_s = 60;
    const SearchRun run = run_search(g, c, o, {"cd-nbh", "dp", k.expert});
    double searched_s = 0, best_expert_s = 1e300;
    for (const SearchResult& r : run.results) {
      REQUIRE(r.report.feasible);
      if (r.method == "cd-nbh") searched_s = r.report.iteration_s;
      else best_expert_s = std::min(best_expert_s, r.report.iteration_s);
    }
    REQUIRE(searched_s > 0);
    CHECK(searched_s <= best_expert_s);
  }
}
