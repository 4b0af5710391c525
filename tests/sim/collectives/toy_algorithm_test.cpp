// The collective-algorithm recipe of docs/architecture.md on the simulator's side, from test
// code alone: a toy all-reduce registered in costmodel's algorithm table (a tier formula, so
// mesh dims price with it) and in the simulator's generator table under the same id. The
// lowering then runs each gradient all-reduce with the algorithm evaluate() priced it with.
#include <catch2/catch.hpp>

#include <cmath>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/collective.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/zoo.hpp"
#include "autoddl/sim/collectives.hpp"
#include "autoddl/sim/lowering.hpp"
#include "autoddl/sim/simulate.hpp"

using namespace autoddl;
using costmodel::CollectiveAlgo;
using costmodel::CollectiveKind;

namespace {

// Half the ring's time on one tier: an all-reduce moving half the bytes.
double toy_tier_time_s(CollectiveKind kind, int p, double bytes, const costmodel::LinkTier& tier) {
  if (kind != CollectiveKind::all_reduce) return -1;
  return costmodel::ring_time_s(kind, p, bytes / 2, tier);
}

bool any_group(int ranks, int) { return ranks >= 1; }

// Its steps: the ring's, on half the bytes.
void toy_run(const sim::RankGroup& group, double bytes, sim::Fidelity fidelity) {
  sim::run_collective(CollectiveKind::all_reduce, CollectiveAlgo::ring, group, bytes / 2, fidelity);
}

// Registered in both tables for one scope, removed after it: other tests see the tables as built.
struct ToyAlgo {
  CollectiveAlgo algo = costmodel::register_collective_algo({.name = "toy_sim_half", .tier_time_s = toy_tier_time_s});
  ToyAlgo() { sim::register_collective_algorithm({CollectiveKind::all_reduce, algo, "all_reduce_toy_sim_half", any_group, toy_run}); }
  ~ToyAlgo() {
    sim::unregister_collective_algorithm(CollectiveKind::all_reduce, algo);
    costmodel::unregister_collective_algo(algo);
  }
};

// Simulated seconds of the program's all-reduces (simulate() runs in a child process, so the
// toy's effect is read from the timings it returns).
double all_reduce_s(const sim::Program& p, const sim::SimResult& r) {
  double s = 0;
  for (size_t i = 0; i < p.tasks().size(); ++i) {
    const sim::Task& t = p.tasks()[i];
    if (t.kind == sim::TaskKind::collective && t.collective == CollectiveKind::all_reduce) s += r.tasks[i].end_s - r.tasks[i].start_s;
  }
  return s;
}

int all_reduces_with(const sim::Program& p, CollectiveAlgo algo) {
  int n = 0;
  for (const sim::Task& t : p.tasks()) {
    n += t.kind == sim::TaskKind::collective && t.collective == CollectiveKind::all_reduce && t.algo == algo;
  }
  return n;
}

}  // namespace

TEST_CASE("a toy collective algorithm registered from test code is what the lowering simulates",
          "[sim][collectives][extension]") {
  const auto c = costmodel::resolve_cluster("dgx1-v100", 1);  // α-β tiers: no nccl block, no calibration
  const auto g = costmodel::build_zoo_model("mlp", costmodel::parse_knob_list("batch=64"));
  const auto dp = costmodel::make_scheme("dp", g, c, {});

  const sim::LoweredProgram ring = sim::lower_scheme(g, c, dp);
  REQUIRE(all_reduces_with(ring.program, CollectiveAlgo::ring) > 0);
  const sim::SimResult ring_r = sim::simulate(ring.program, c);

  const ToyAlgo registered;
  const CollectiveAlgo toy = registered.algo;
  const sim::LoweredProgram lp = sim::lower_scheme(g, c, dp);
  CHECK(all_reduces_with(lp.program, CollectiveAlgo::ring) == 0);
  CHECK(all_reduces_with(lp.program, toy) == all_reduces_with(ring.program, CollectiveAlgo::ring));
  CHECK(lp.analytical.grad_sync_s < ring.analytical.grad_sync_s);
  const sim::SimResult r = sim::simulate(lp.program, c);
  REQUIRE(std::isfinite(r.iteration_s));
  CHECK(r.iteration_s > 0);
  CHECK(r.iteration_s <= ring_r.iteration_s);
  // The toy's steps move half the ring's bytes: its all-reduces take well under the ring's.
  REQUIRE(r.tasks.size() == lp.program.tasks().size());
  CHECK(all_reduce_s(lp.program, r) < 0.75 * all_reduce_s(ring.program, ring_r));
}
