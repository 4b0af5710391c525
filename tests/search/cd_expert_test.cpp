// `cd-expert`: the best Megatron-LM grid points map into cost tables built for their own mesh,
// stages and configuration with no change in evaluate()'s price (pipeline stages, sequence
// parallelism, interleaved chunks and scatter/gather sends included), and descent from them never returns a scheme
// slower than the best grid point; the scheme it returns re-costs to its reported time.
#include <catch2/catch.hpp>

#include <map>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/search/searcher.hpp"
#include "fixtures.hpp"

using namespace search_fixtures;

TEST_CASE("cd-expert maps the expert grid points exactly and never ends slower than the best one",
          "[search][cd-expert]") {
  struct Case {
    const char* cluster;
    int nodes;
    std::map<std::string, std::string> knobs;
    bool pipelined;  // the best grid point has pp > 1
  };
  for (const Case& k : {Case{"dgx-a100", 1, {{"batch", "16"}, {"layers", "8"}}, false},
                        Case{"piz-daint", 8, {{"batch", "64"}, {"layers", "32"}, {"hidden", "4096"}, {"heads", "32"}}, true}}) {
    INFO("gpt on " << k.nodes << " " << k.cluster << " nodes");
    const ClusterSpec c = resolve_cluster(k.cluster, k.nodes);
    const Graph g = build_zoo_model("gpt", k.knobs);
    SearchOptions o;
    o.time_limit_s = 120;
    const SearchRun run = run_search(g, c, o, {"cd-expert", "megatron"});
    const SearchResult* ce = nullptr;
    const SearchResult* mega = nullptr;
    for (const SearchResult& r : run.results) (r.method == "cd-expert" ? ce : mega) = &r;
    REQUIRE(ce);
    REQUIRE(mega);
    REQUIRE(mega->report.feasible);
    CHECK(ce->report.feasible);
    CHECK(ce->report.iteration_s <= mega->report.iteration_s);
    CHECK(evaluate(g, c, ce->scheme).iteration_s == ce->report.iteration_s);
    const auto& starts = ce->details["starts"];
    REQUIRE(starts.size() >= 1);
    CHECK(starts[0]["expert"] == mega->note);
    CHECK((mega->scheme.stages() > 1) == k.pipelined);
    // piz-daint's best point is interleaved (v chunks per stage): descended from, not skipped.
    CHECK((mega->scheme.virtual_stages > 1) == k.pipelined);
    for (const auto& s : starts) {
      INFO("from " << s["expert"]);
      REQUIRE_FALSE(s.contains("skipped"));
      // Exactly, but from a Megatron-FSDP point (fsdp=1) within 1%: the tables' ZeRO-3 storage
      // shards a parameter on every dim it is replicated on, tensor-parallel dims included (the
      // LayerNorm weights), where Megatron-FSDP shards over the data-parallel ranks only.
      const bool fsdp = s["expert"].get<std::string>().find("fsdp=1") != std::string::npos;
      CHECK(s["mapped_iteration_s"].get<double>() ==
            Approx(s["expert_iteration_s"].get<double>()).epsilon(fsdp ? 0.01 : 1e-12));
      CHECK(s["objective_s"].get<double>() <= s["start_objective_s"].get<double>());
    }
  }
}

TEST_CASE("on GPT-3 175B over 128 A100 the default search is at least as fast as the best Megatron-LM point",
          "[search][cd-expert][gpt3]") {
  // Issue 11's production case; about 100 s on two cores (cd-mesh's second pass runs to 90 s).
  const ClusterSpec c = resolve_cluster("dgx-a100", 16);
  const Graph g = build_zoo_model(
      "gpt", {{"layers", "96"}, {"hidden", "12288"}, {"heads", "96"}, {"seq", "2048"}, {"vocab", "51200"}, {"batch", "1024"}});
  // The default methods; the time limit raised from its 60 s so that a loaded machine (where the
  // grid walk alone can take half a minute) does not stop cd-mesh's first pass before every mesh
  // is searched; not more, since cd-mesh's second pass deepens meshes until 3/4 of it.
  SearchOptions o;
  o.time_limit_s = 120;
  o.jobs = 2;
  const SearchRun run = run_search(g, c, o, default_methods());
  REQUIRE_FALSE(run.results.empty());
  const SearchResult& best = run.results.front();
  const SearchResult* mega = nullptr;
  for (const SearchResult& r : run.results) {
    if (r.method == "megatron") mega = &r;
  }
  REQUIRE(mega);
  REQUIRE(mega->report.feasible);
  CHECK(best.report.feasible);
  CHECK(best.report.iteration_s <= mega->report.iteration_s);
  CHECK(best.method != "megatron");  // a searched method ranks first (ties go to the search)
  // The best grid point is interleaved (v chunks per stage); cd-expert descends from it and
  // improves on it rather than returning it.
  CHECK(mega->scheme.virtual_stages > 1);
  CHECK(best.report.iteration_s < mega->report.iteration_s);
  // cd-mesh is one of the default methods (issue 31): every mesh of the 128 GPUs searched (in
  // depth or at its probe) or pruned by a bound, none left for lack of time; full recompute's
  // configurations are pruned by their compute bound, and it is never slower than cd-expert.
  const SearchResult& mesh = result_of(run, "cd-mesh");
  const SearchResult& expert = result_of(run, "cd-expert");
  const auto& d = mesh.details;
  CHECK(d["meshes_total"].get<int>() == 43);
  CHECK(d["not_reached"].get<int>() == 0);
  CHECK(d["meshes"].size() + d["pruned"].size() == 43);
  CHECK(d["configurations_pruned_by_bound"].get<int>() > 43);
  CHECK(mesh.report.feasible);
  CHECK(mesh.report.iteration_s <= expert.report.iteration_s);
}
