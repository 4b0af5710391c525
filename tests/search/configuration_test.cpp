// The search's configuration (micro-batches x recompute) is chosen by cost, not by first fit:
// on one GPU too small for one micro-batch without recompute, full recompute with one
// micro-batch fits first but is slower than two micro-batches without recompute (recompute
// re-runs a third of the work); the search must return a scheme at least as fast as every
// configuration a user could write by hand (issue 14, defect 5).
#include <catch2/catch.hpp>

#include <string>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/search/searcher.hpp"
#include "fixtures.hpp"

using namespace search_fixtures;

TEST_CASE("search ranks micro-batches x recompute by cost, not by first fit", "[search][config]") {
  ClusterSpec c = resolve_cluster("dgx-a100", 1);
  c.gpus_per_node = 1;
  const Graph g = build_zoo_model("gpt", parse_knob_list("layers=16,hidden=4096,heads=32,seq=512,batch=16,vocab=51200"));
  // Tighten the memory so that one micro-batch fits only with full recompute (selective keeps
  // about 63% of the activations here, two micro-batches about half).
  const CostReport tight = evaluate(g, c, make_scheme("megatron:tp=1,pp=1,dp=1,mb=16,recompute=none", g, c, {}));
  c.gpu.memory_bytes = tight.peak_memory_bytes - 0.42 * tight.activation_memory_bytes;
  REQUIRE_FALSE(evaluate(g, c, make_scheme("megatron:tp=1,pp=1,dp=1,mb=16,recompute=none", g, c, {})).feasible);
  REQUIRE_FALSE(evaluate(g, c, make_scheme("megatron:tp=1,pp=1,dp=1,mb=16,recompute=selective", g, c, {})).feasible);
  const CostReport full1 = evaluate(g, c, make_scheme("megatron:tp=1,pp=1,dp=1,mb=16,recompute=full", g, c, {}));
  const CostReport none2 = evaluate(g, c, make_scheme("megatron:tp=1,pp=1,dp=1,mb=8,recompute=none", g, c, {}));
  REQUIRE(full1.feasible);
  REQUIRE(none2.feasible);
  REQUIRE(none2.iteration_s < full1.iteration_s);  // the first fit is not the fastest

  SearchOptions o;
  o.mesh_shape = {1};
  o.time_limit_s = 20;
  const SearchRun run = run_search(g, c, o, {"cd"});
  REQUIRE_FALSE(run.results.empty());
  const SearchResult& best = run.results.front();
  REQUIRE(best.method == "cd");
  CHECK(best.report.feasible);
  CHECK(best.report.iteration_s <= none2.iteration_s * (1 + 1e-9));
}
