// The certificates at scale: the tied-layer ILP (ilp_tied.hpp) against the full ILP, and the
// cheap mesh bounds of cd-mesh (mesh_bound.hpp) against what the search finds on each mesh.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/mesh.hpp"
#include "autoddl/costmodel/timeline.hpp"
#include "autoddl/search/ilp.hpp"
#include "autoddl/search/ilp_tied.hpp"
#include "autoddl/search/mesh_bound.hpp"
#include "autoddl/search/searcher.hpp"
#include "fixtures.hpp"

using namespace search_fixtures;

namespace {

IlpResult full_ilp(const CostTables& t) {
  IlpOptions o;
  o.time_limit_s = 60;
  return solve_ilp(t, make_coordinates(t, false), o);
}

}  // namespace

TEST_CASE("the tied-layer ILP proves the full ILP's optimum on a 4-layer GPT and CD stays above it",
          "[search][exact][certificate]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const Graph g = tiny_gpt(4);
  SearchOptions o;
  o.mesh_shape = {8};
  o.random_restarts = 0;
  const SearchRun run = run_search(g, c, o, {"cd", "ilp", "ilp-tied"});
  const SearchResult& ilp = result_of(run, "ilp");
  const SearchResult& tied = result_of(run, "ilp-tied");
  REQUIRE(ilp.optimal);
  REQUIRE(tied.bound_s);
  // 4 layers + the rest: the first layer (fed by the embedding), the three others, the rest.
  CHECK(tied.details["classes"] == 3);
  CHECK(tied.details["parts"] == 5);
  CHECK(*tied.bound_s == Approx(*ilp.objective_s).epsilon(1e-6));
  CHECK(tied.optimal);
  CHECK(*tied.objective_s == Approx(*ilp.objective_s).epsilon(1e-6));
  const SearchResult& cd = result_of(run, "cd");
  REQUIRE(cd.best_objective_s);
  CHECK(*cd.best_objective_s >= *tied.bound_s * (1 - 1e-9));
  REQUIRE(run.ilp_bound_s);
  CHECK(*run.ilp_bound_s >= *tied.bound_s * (1 - 1e-9));
}

TEST_CASE("with memory binding the tied bound (Lagrange) stays at or below the full optimum",
          "[search][exact][certificate]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const Graph g = tiny_gpt(4);
  CostTables t(g, c, table_options({8}));
  // Capacity between the leanest and the fastest assignment's memory: the rows bind.
  const IlpResult roomy = full_ilp(t);
  REQUIRE(roomy.optimal);
  const double fastest_bytes = recompute_objective(t, roomy.choice).memory_bytes[0];
  t.set_capacity_bytes(0, 0.6 * fastest_bytes);
  const IlpResult tight = full_ilp(t);
  REQUIRE(tight.optimal);
  REQUIRE(tight.objective_s > roomy.objective_s);
  TiedBoundOptions opt;
  opt.time_limit_s = 60;
  opt.price_steps = 6;
  opt.consistency_steps = 3;
  const TiedBound b = tied_layer_bound(t, opt);
  INFO("tied bound " << b.bound_s << ", full optimum " << tight.objective_s << ", price " << b.memory_price_s_per_byte);
  CHECK(b.memory_price_s_per_byte > 0);
  CHECK(b.bound_s <= tight.objective_s * (1 + 1e-9));
  CHECK(b.bound_s > roomy.objective_s * 0.5);  // the price made it tighter than half the unconstrained optimum
  if (b.fits) CHECK(b.objective_s >= tight.objective_s * (1 - 1e-9));
}

TEST_CASE("a mesh's lower bound is at most every scheme found on it and a mesh too small is pruned",
          "[search][certificate]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph g = tiny_gpt(2, 16);
  int checked = 0;
  for (const std::vector<int>& mesh : std::vector<std::vector<int>>{
           {16}, {2, 8}, {4, 4}, {2, 2, 4}}) {
    try {
      make_mesh(c, mesh, "mesh");
    } catch (const autoddl::InputError&) {
      continue;  // not node-aligned
    }
    const MeshBound b = mesh_lower_bound(g, c, mesh, -1);
    CHECK(b.fits());
    SearchOptions o;
    o.mesh_shape = mesh;
    o.random_restarts = 0;
    const SearchRun run = run_search(g, c, o, {"cd", "zero3"});
    for (const SearchResult& r : run.results) {
      if (!r.report.feasible) continue;
      INFO("mesh of " << mesh.size() << " dims, " << r.method << ": " << r.report.iteration_s << " s, bound "
                      << b.iteration_s << " s");
      CHECK(b.iteration_s > 0);
      CHECK(b.iteration_s <= r.report.iteration_s);
      CHECK(b.memory_bytes <= r.report.peak_memory_bytes);
      ++checked;
    }
  }
  CHECK(checked >= 8);
  // GPT-3's parameters, gradients and optimizer state do not fit on 8 A100s, however sharded.
  const ClusterSpec one = resolve_cluster("dgx-a100", 1);
  const Graph big = build_zoo_model("gpt", {{"layers", "96"}, {"hidden", "12288"}, {"heads", "96"}});
  const MeshBound b = mesh_lower_bound(big, one, {8}, -1);
  CHECK_FALSE(b.fits());
  SearchOptions o;
  o.mesh_shape = {8};
  const SearchRun run = run_search(big, one, o, {"zero3"});
  CHECK_FALSE(run.results.at(0).report.feasible);
}

TEST_CASE("a mesh's compute bound per recompute mode is at most every Megatron-LM layout's iteration with that "
          "recompute, and full recompute's extra forward raises it",
          "[search][certificate][cd-mesh]") {
  // What lets cd-mesh prune the full-recompute configurations of every GPT-3 mesh at once (issue
  // 31): the bound with full recompute charges the forward it re-runs, and stays below evaluate().
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph g = tiny_gpt(4, 16);
  constexpr const char* kModes[] = {"none", "selective", "full"};
  int checked = 0;
  for (const char* layout : {"tp=1,pp=1,dp=16,mb=1", "tp=4,pp=1,dp=4,mb=1", "tp=8,pp=1,dp=2,mb=2",
                             "tp=4,pp=2,dp=2,mb=1", "tp=2,pp=4,dp=2,mb=1"}) {
    for (int r = 0; r < 3; ++r) {
      const std::string spec = std::string("megatron:") + layout + ",sp=0,recompute=" + kModes[r];
      const Scheme s = make_scheme(spec, g, c, {});
      const CostReport rep = evaluate(g, c, s);
      const MeshBound b = mesh_lower_bound(g, c, s.mesh_shape, s.pipeline_dim);
      INFO(spec << ": iteration " << rep.iteration_s << " s, bounds " << b.stage_compute_by_recompute_s[0] << " / "
                << b.stage_compute_by_recompute_s[1] << " / " << b.stage_compute_by_recompute_s[2] << " s");
      CHECK(b.stage_compute_by_recompute_s[0] == b.stage_compute_s);
      CHECK(b.stage_compute_by_recompute_s[0] <= b.stage_compute_by_recompute_s[1]);
      CHECK(b.stage_compute_by_recompute_s[1] <= b.stage_compute_by_recompute_s[2]);
      // Full recompute re-runs every layer's forward: about a third more than forward + backward.
      CHECK(b.stage_compute_by_recompute_s[2] >= 1.15 * b.stage_compute_by_recompute_s[0]);
      const double bubble = pipeline_bubble_factor(s.stages(), s.virtual_stages, s.micro_batches);
      CHECK(b.stage_compute_by_recompute_s[r] * bubble <= rep.iteration_s);
      ++checked;
    }
  }
  CHECK(checked == 15);
}

namespace {

// cd-nbh's lowest objective against the full ILP's lower bound on the same tables (CBC's proven
// bound; issue 31 item 4: within 1% on the small zoo, or the gap stated).
void cd_within_of_optimum(const char* model, std::map<std::string, std::string> knobs, double tolerance) {
  INFO(model);
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph g = build_zoo_model(model, knobs);
  SearchOptions o;
  o.mesh_shape = {2, 8};
  o.time_limit_s = 60;
  const SearchRun run = run_search(g, c, o, {"cd-nbh", "ilp"});
  const SearchResult& ilp = result_of(run, "ilp");
  const SearchResult& cd = result_of(run, "cd-nbh");
  REQUIRE(ilp.optimal);  // within CBC's relative gap: the bound below is what is proven
  REQUIRE(run.ilp_bound_s);
  REQUIRE(cd.best_objective_s);
  CHECK(*cd.best_objective_s >= *run.ilp_bound_s * (1 - 1e-9));
  CHECK(*cd.best_objective_s <= *run.ilp_bound_s * (1 + tolerance));
}

}  // namespace

TEST_CASE("cd-nbh ends within 1% of the ILP bound on the MLP and CNNs of the small zoo",
          "[search][exact][certificate]") {
  cd_within_of_optimum("mlp", {{"layers", "8"}}, 0.01);
  cd_within_of_optimum("vgg16", {}, 0.01);
  cd_within_of_optimum("resnet50", {}, 0.01);
}

TEST_CASE("cd-nbh ends within 1% of the ILP bound on a 2-layer GPT and BERT", "[search][exact][certificate]") {
  cd_within_of_optimum("gpt", {{"layers", "2"}}, 0.01);
  // BERT on 2x8: the ILP keeps attention replicated over the node dim where CD's neighbourhoods
  // and windows ended with its heads split there, 2.1% above; the region move (a whole attention
  // block replicated over one mesh dim at once) reaches the optimum.
  cd_within_of_optimum("bert", {{"layers", "2"}}, 0.01);
}
