// On graphs small enough to enumerate (3–4 ops, up to ~10^5 assignments), brute force, the tree
// DP and the ILP agree exactly on the optimum of the table objective: for a chain, for a tensor
// read by two ops (the backward gradient-sum term), for a parameter read by two ops (the tied
// term), across pipeline stages (send/recv terms), on 1-D and 2-D meshes, and with the memory
// capacity binding (the ILP's memory rows against brute force over the assignments that fit).
#include <catch2/catch.hpp>

#include "autoddl/search/ilp.hpp"
#include "autoddl/search/tree_dp.hpp"
#include "fixtures.hpp"

using namespace search_fixtures;

namespace {

IlpResult ilp(const CostTables& t) {
  IlpOptions o;
  o.time_limit_s = 30;
  return solve_ilp(t, make_coordinates(t, false), o);
}

void check_ilp_matches(const CostTables& t, const Brute& b) {
  const IlpResult r = ilp(t);
  REQUIRE(r.has_solution);
  CHECK(r.optimal);
  CHECK(r.objective_s == Approx(b.best_feasible_s).epsilon(1e-9));
  CHECK(r.bound_s == Approx(b.best_feasible_s).epsilon(1e-6));
  const Objective o = recompute_objective(t, r.choice);
  CHECK(o.penalty_s == 0);
}

}  // namespace

TEST_CASE("brute force, tree DP and the ILP find the same optimum on a 4-op chain", "[search][exact]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const Graph g = chain_graph();
  for (const auto& mesh : {std::vector<int>{4}, std::vector<int>{2, 2}}) {
    const CostTables t(g, c, table_options(mesh, mesh.size() == 1));
    INFO("mesh of " << mesh.size() << " dims, " << combinations(t) << " assignments");
    REQUIRE(combinations(t) <= 5e5);
    const Brute b = brute_force(t);
    const TreeDpResult dp = tree_dp(t, make_coordinates(t, false));
    REQUIRE(dp.applicable);
    CHECK(dp.exact);
    CHECK(dp.objective_s == Approx(b.best_objective_s).epsilon(1e-9));
    check_ilp_matches(t, b);
  }
}

TEST_CASE("the ILP prices a tensor read by two ops like brute force, the DP declines it", "[search][exact]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const Graph g = residual_graph();
  for (const auto& mesh : {std::vector<int>{4}, std::vector<int>{2, 2}}) {
    const CostTables t(g, c, table_options(mesh, false));
    REQUIRE(combinations(t) <= 5e5);
    const TreeDpResult dp = tree_dp(t, make_coordinates(t, false));
    CHECK_FALSE(dp.applicable);
    CHECK_FALSE(dp.why_not.empty());
    check_ilp_matches(t, brute_force(t));
  }
}

TEST_CASE("brute force, tree DP and the ILP agree when one parameter is read by two ops", "[search][exact]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const Graph g = tied_graph();
  const CostTables t(g, c, table_options({4}));
  REQUIRE(combinations(t) <= 5e5);
  const Brute b = brute_force(t);
  const TreeDpResult dp = tree_dp(t, make_coordinates(t, false));
  if (dp.applicable) CHECK(dp.objective_s == Approx(b.best_objective_s).epsilon(1e-9));
  check_ilp_matches(t, b);
}

TEST_CASE("the ILP's memory rows find brute force's best assignment among those that fit", "[search][exact]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const Graph g = chain_graph(8, 512, 2048, 512);
  CostTables t(g, c, table_options({4}));
  const Brute loose = brute_force(t);
  // A capacity below the fastest assignment's footprint but above the smallest one.
  const double fastest = recompute_objective(t, loose.best_feasible).memory_bytes[0];
  REQUIRE(loose.min_memory < fastest);
  t.set_capacity_bytes(0, 0.5 * (loose.min_memory + fastest));
  const Brute tight = brute_force(t);
  REQUIRE(tight.best_feasible_s > loose.best_feasible_s);  // the capacity binds
  check_ilp_matches(t, tight);
}

TEST_CASE("brute force and the ILP agree across two pipeline stages", "[search][exact]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const Graph g = chain_graph();
  TableOptions o = table_options({2, 4});
  o.pipeline_dim = 0;
  o.micro_batches = 2;
  o.op_stage = {0, 0, 1, 1};
  const CostTables t(g, c, o);
  REQUIRE(t.stages() == 2);
  REQUIRE(combinations(t) <= 5e5);
  const Brute b = brute_force(t);
  const TreeDpResult dp = tree_dp(t, make_coordinates(t, false));
  REQUIRE(dp.applicable);
  CHECK(dp.objective_s == Approx(b.best_objective_s).epsilon(1e-9));
  check_ilp_matches(t, b);
}
