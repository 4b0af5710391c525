// `simulate --sync` (scheme_sim.hpp): the scheme's simulated iteration with its DDP buckets
// replaced by a strategy. The buckets written as a strategy (dp.ddp: one ring or hierarchical
// all-reduce group per bucket, released by the backward task of its last gradient, which is the
// bucket's own release) run the same collectives at the same times, so they simulate as the
// plain lowering does (to 1e-6; measured: equal to 10 digits); a PS strategy must change
// the simulated iteration the way cost --sync changes the analytical one.
#ifdef AUTODDL_SYNC_HAVE_SIM
#include "autoddl/sync/scheme_sim.hpp"

#include <catch2/catch.hpp>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/zoo.hpp"
#include "autoddl/sim/lowering.hpp"
#include "autoddl/sync/builders.hpp"

using namespace autoddl;
using namespace autoddl::sync;
using namespace autoddl::costmodel;

namespace {

struct Case {
  Graph g;
  ClusterSpec c;
  Scheme s;
  IterationPlan plan;
  DataParallelSync dp;
};

Case make_case(const std::string& model, const std::string& batch, const std::string& cluster,
               const std::string& scheme) {
  Case x{build_zoo_model(model, {{"batch", batch}}), resolve_cluster(cluster), {}, {}, {}};
  x.s = make_scheme(scheme, x.g, x.c, {});
  evaluate(x.g, x.c, x.s, &x.plan);
  x.dp = data_parallel_sync(x.g, x.c, x.s, x.plan);
  return x;
}

sim::SimOptions flow() {
  sim::SimOptions o;
  o.fidelity = sim::Fidelity::flow;
  return o;
}

}  // namespace

TEST_CASE("the scheme's DDP buckets as a strategy simulate as plain simulate does",
          "[sync][scheme][sim]") {
  // autosync-a: one ring across 11 nodes; autosync-b: 4x4, reduce-scatter in the node then
  // all-reduce across (hierarchical); the pipelined scheme: each stage's group its own buckets.
  struct Spec {
    const char *model, *batch, *cluster, *scheme;
  };
  for (const Spec& sp : {Spec{"vgg16", "44", "autosync-a", "dp"}, Spec{"vgg16", "32", "autosync-b", "dp"},
                         Spec{"resnet50", "32", "autosync-b", "megatron:tp=1,pp=2,dp=8"}}) {
    INFO(sp.model << " on " << sp.cluster << ", " << sp.scheme);
    Case x = make_case(sp.model, sp.batch, sp.cluster, sp.scheme);
    const sim::SchemeSimulation plain = sim::simulate_scheme(x.g, x.c, x.s, flow());
    const SchemeSyncSimulation with = simulate_scheme_with_strategy(x.g, x.c, x.s, x.plan, x.dp, x.dp.ddp, flow());
    CHECK(with.transfers > 0);
    CHECK(with.result.iteration_s == Approx(plain.result.iteration_s).epsilon(1e-6));
    // The report's analytical side is cost --sync's, which for the buckets is the cost model's.
    CHECK(with.report.analytical_iteration_s == Approx(with.cost.iteration_s));
    CHECK(with.cost.iteration_s == Approx(plain.report.analytical_iteration_s).epsilon(0.01));
    // No DDP bucket is left in the program.
    for (const sim::Task& t : with.lowered.program.tasks()) CHECK_FALSE(t.name.rfind("bucket ", 0) == 0);
  }
}

TEST_CASE("a PS strategy is simulated with incast at its servers and compared with cost --sync",
          "[sync][scheme][sim]") {
  Case x = make_case("vgg16", "44", "autosync-a", "dp");
  const SchemeSyncSimulation ddp = simulate_scheme_with_strategy(x.g, x.c, x.s, x.plan, x.dp, x.dp.ddp, flow());
  // One server for every gradient: 10 other nodes push into one NIC, far slower than the ring,
  // in the simulation as in the analytical model.
  Strategy ps = find_builder("ps").build(x.dp.vars, x.dp.cluster);
  const SchemeSyncSimulation one = simulate_scheme_with_strategy(x.g, x.c, x.s, x.plan, x.dp, ps, flow());
  CHECK(one.result.iteration_s > 2 * ddp.result.iteration_s);
  CHECK(one.cost.iteration_s > 2 * ddp.cost.iteration_s);
  // Balanced over the 11 nodes' NICs: faster than one server.
  Strategy lb = find_builder("ps_lb").build(x.dp.vars, x.dp.cluster);
  const SchemeSyncSimulation spread = simulate_scheme_with_strategy(x.g, x.c, x.s, x.plan, x.dp, lb, flow());
  CHECK(spread.result.iteration_s < one.result.iteration_s);
  // Pushes and pulls: two transfers per remote worker and shard.
  CHECK(one.transfers == 2 * 10 * static_cast<int64_t>(x.dp.vars.size()));
  // Within the tolerance no discrepancy is reported, beyond it one names the cause.
  for (const SchemeSyncSimulation* r : {&ddp, &one, &spread}) {
    CHECK(r->report.analytical_iteration_s == r->cost.iteration_s);
    CHECK(r->report.discrepancy.empty() == (std::abs(r->report.relative_difference) <= 0.10));
  }
}
#endif

#ifdef AUTODDL_SYNC_HAVE_SIM
#include "autoddl/sync/scheme_sync_search.hpp"

TEST_CASE("search --sync on a pipelined scheme prices its finalists per stage and never loses to DDP",
          "[sync][scheme][pipeline]") {
  Case x = make_case("resnet50", "32", "autosync-b", "megatron:tp=1,pp=2,dp=8");
  REQUIRE(x.dp.stages.size() == 2);
  const CostReport r = evaluate(x.g, x.c, x.s);
  LowShotOptions o;
  o.trials = 2;
  o.per_round = 2;
  o.explore = 8;
  o.repeats = 1;
  o.confirm_top = 1;
  const SchemeSyncSearch ss = search_scheme_sync(x.g, r, x.dp, o);
  CHECK(ss.ddp_iteration_s == r.iteration_s);
  CHECK(ss.best.iteration_s <= r.iteration_s);
  REQUIRE_FALSE(ss.finalists.empty());
  for (const SchemeSyncChoice& f : ss.finalists)
    CHECK(f.iteration_s == Approx(cost_with_strategy(r, x.dp, f.strategy).iteration_s));
}
#endif
