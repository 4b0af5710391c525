// The SimGrid evaluator: PS time grows with the workers per server as the incast model says,
// all-reduce agrees with the analytical evaluator when uncontended, and a seed fixes the jitter.
#ifdef AUTODDL_SYNC_HAVE_SIM
#include "autoddl/sync/simulated.hpp"

#include <catch2/catch.hpp>

#include "autoddl/costmodel/zoo.hpp"
#include "autoddl/sync/analytical.hpp"
#include "autoddl/sync/builders.hpp"
#include "tiny.hpp"

using namespace autoddl::sync;
using namespace autoddl::costmodel;

namespace {
const SimSyncOptions kNoJitter{1, 0.0, 0.0};

struct Both {
  Evaluation analytical;
  SimSyncResult simulated;
};
Both evaluate(const Graph& g, const ClusterSpec& c, const std::string& builder) {
  std::vector<Variable> vars = extract_variables(g);
  Strategy s = find_builder(builder).build(vars, c);
  return {evaluate_analytical(g, vars, s, c), simulate_strategy(g, vars, s, c, kNoJitter)};
}
}  // namespace

TEST_CASE("simulated PS: one server's time grows with its remote workers (incast)",
          "[sync][simulated]") {
  // MLP, 4 layers of 1024: 16.8 MB of fp32 gradients, all on node 0's server; 1e9 B/s NICs.
  // The analytical server time is 2·(N−1)·(16.8 MB / 1e9 + 8α): it doubles from 5 to 9 nodes.
  Graph g = build_zoo_model("mlp", {});
  std::vector<double> sync_s;
  for (int nodes : {3, 5, 9}) {
    INFO(nodes << " nodes");
    Both r = evaluate(g, test::test_cluster(nodes, 1), "ps");
    const double sim_sync = r.simulated.iteration_s - r.analytical.forward_s - r.analytical.backward_s;
    CHECK(sim_sync == Approx(r.analytical.ps_max_s).epsilon(0.05));
    sync_s.push_back(sim_sync);
  }
  CHECK(sync_s[1] / sync_s[0] == Approx(4.0 / 2.0).epsilon(0.05));
  CHECK(sync_s[2] / sync_s[1] == Approx(8.0 / 4.0).epsilon(0.05));
}

TEST_CASE("simulated PS: spreading the variables over servers removes most of the incast",
          "[sync][simulated]") {
  Graph g = build_zoo_model("mlp", {});
  ClusterSpec c = test::test_cluster(4, 1);
  Both one = evaluate(g, c, "ps");
  Both spread = evaluate(g, c, "partitioned_ps");
  CHECK(spread.simulated.iteration_s < 0.6 * one.simulated.iteration_s);
}

TEST_CASE("simulated all-reduce agrees with the analytical evaluator when uncontended",
          "[sync][simulated]") {
  Graph g = build_zoo_model("mlp", {});
  Both r = evaluate(g, test::test_cluster(4, 1), "all_reduce");
  CHECK(r.simulated.iteration_s == Approx(r.analytical.iteration_s).epsilon(0.03));
}

TEST_CASE("a fixed seed gives identical simulated runs, other seeds differ", "[sync][simulated]") {
  Graph g = test::tiny_model(true);
  ClusterSpec c = test::test_cluster(3, 2);
  std::vector<Variable> vars = extract_variables(g);
  Strategy s = find_builder("parallax").build(vars, c);
  SimSyncOptions a{42, 0.05, 0.1};
  SimSyncResult r1 = simulate_strategy(g, vars, s, c, a);
  SimSyncResult r2 = simulate_strategy(g, vars, s, c, a);
  CHECK(r1.iteration_s == r2.iteration_s);
  a.seed = 43;
  CHECK(simulate_strategy(g, vars, s, c, a).iteration_s != r1.iteration_s);
}

TEST_CASE("repeated runs are the single runs with seeds seed + r, and the label is their mean", "[sync][simulated]") {
  Graph g = test::tiny_model(true);
  ClusterSpec c = test::test_cluster(3, 2);
  std::vector<Variable> vars = extract_variables(g);
  Strategy s = find_builder("parallax").build(vars, c);
  SimSyncOptions o{7, 0.05, 0.1};
  o.runs = 3;
  const SimSyncResult all = simulate_strategy(g, vars, s, c, o);
  CHECK(all.simulations == 3);
  REQUIRE(all.runs_s.size() == 3);
  double sum = 0;
  for (int r = 0; r < 3; ++r) {
    SimSyncOptions one{7 + static_cast<uint64_t>(r), 0.05, 0.1};
    CHECK(all.runs_s[static_cast<size_t>(r)] == simulate_strategy(g, vars, s, c, one).iteration_s);
    sum += all.runs_s[static_cast<size_t>(r)];
  }
  CHECK(all.iteration_s == Approx(sum / 3));
  CHECK(all.runs_s[0] != all.runs_s[1]);
}
#endif
