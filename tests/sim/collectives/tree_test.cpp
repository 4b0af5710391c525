// Uncontended tree all-reduce in the simulator against costmodel's NCCL double-binary-tree
// model, collective_algo_time_s(..., tree, ...) = 2·(⌈log2 n⌉·α_o + (g−1)·α_i) + 2·S·β_r.
//
// What agreement is possible, and why (derivation):
// - Latency: the simulated trees are NCCL's (ncclGetBtree / ncclGetDtree), depth ⌈log2 n⌉, and
//   each node's chain (g−1 intra hops) feeds the node's head, so the longest path of a phase is
//   exactly the model's (g−1)·α_i + ⌈log2 n⌉·α_o.
// - Bandwidth, g = 1 (one GPU per node): each node sends S and receives S per phase through its
//   NICs (interior in one tree: 2 children × S/2 in, S/2 out; leaf in the other: S/2 out), so a
//   phase takes S·β_r as in the model; flow fidelity matches within 1%.
// - Bandwidth, g > 1: a head that is interior in its tree receives its chain's S/2 and its two
//   children's S/2 each through its one NVSwitch port, 1.5·S, where the model charges S at
//   min(intra, NIC). On dgx-a100 (port 240 GB/s, NICs 8×25 GB/s·eff) the port is the bottleneck
//   for large S, so the simulation is up to 1.5·β_i/β_r − 1 slower there. A real tree schedule
//   cannot avoid this without moving the children to another GPU, which puts every node's chain
//   on the critical path (NCCL's "balanced tree" pattern) and breaks the latency term instead.
// - 2 nodes: each of the two trees is a single edge, so a node sends only S/2 per phase; the
//   simulation is up to 2x faster than the model's 2·S·β_r (measured 0.50 relative error).
// - step fidelity pipelines each phase as a dataflow in chunks (≤ 64 of ≥ 64 KiB, 2 in flight
//   per edge). Expected: the fill costs about depth·(α + 2·chunk·β) more than the model.
//   Measured: up to 50% (1-GPU nodes) and 82% (dgx-a100) slower than the model, more than that
//   estimate; the cause is not yet understood (OPEN: see sim/README.md), so these bounds only pin
//   today's behaviour. flow fidelity is the one that agrees with the model.
// The bounds below pin what the implementation achieves (measured maxima in the INFO lines).
#include <catch2/catch.hpp>
#include "../alpha_beta_cluster.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/collective.hpp"
#include "autoddl/sim/simulate.hpp"

using namespace autoddl;
using costmodel::CollectiveAlgo;
using costmodel::CollectiveKind;

namespace {

const std::vector<double> kSizes = {8.0 * 1024, 1024.0 * 1024, 64.0 * 1024 * 1024, 1024.0 * 1024 * 1024};

// Largest relative error (signed max of |err|) of the simulated tree all-reduce over kSizes.
double max_rel_error(const costmodel::ClusterSpec& c, int ranks, sim::Fidelity f) {
  const auto simulated = sim::simulate_collective_sweep(c, CollectiveKind::all_reduce, ranks, kSizes, f,
                                                        CollectiveAlgo::tree);
  double worst = 0;
  for (size_t i = 0; i < kSizes.size(); ++i) {
    const double model = costmodel::collective_algo_time_s(c, CollectiveKind::all_reduce, CollectiveAlgo::tree,
                                                           costmodel::contiguous_group(c, ranks), kSizes[i]);
    REQUIRE(model > 0);
    worst = std::max(worst, std::abs(simulated[i] - model) / model);
  }
  return worst;
}

}  // namespace

TEST_CASE("tree all-reduce over 1-GPU nodes matches the double-binary-tree model", "[sim][collectives]") {
  for (int nodes : {2, 3, 4, 5, 8}) {
    const auto c = costmodel::resolve_cluster("autosync-a", nodes);
    const double flow = max_rel_error(c, nodes, sim::Fidelity::flow);
    const double step = max_rel_error(c, nodes, sim::Fidelity::step);
    INFO("autosync-a nodes=" << nodes << ": flow " << flow << ", step " << step);
    // 2 nodes: each tree is one edge, so a node sends S/2 per phase where the model charges S.
    CHECK(flow < (nodes == 2 ? 0.51 : 0.01));
    CHECK(step < 0.55);
  }
}

TEST_CASE("tree all-reduce over 8-GPU nodes: exact latency, head port bounds the bandwidth", "[sim][collectives]") {
  for (int nodes : {2, 4, 8}) {
    const auto c = autoddl::sim_test::alpha_beta_cluster("dgx-a100", nodes);
    const double flow = max_rel_error(c, nodes * 8, sim::Fidelity::flow);
    const double step = max_rel_error(c, nodes * 8, sim::Fidelity::step);
    INFO("dgx-a100 nodes=" << nodes << ": flow " << flow << ", step " << step);
    CHECK(flow < 0.2);
    CHECK(step < 0.85);
  }
  // Latency-bound: 8 bytes cost the model's latency terms.
  const auto c = autoddl::sim_test::alpha_beta_cluster("dgx-a100", 4);
  const double model = costmodel::collective_algo_time_s(c, CollectiveKind::all_reduce, CollectiveAlgo::tree,
                                                         costmodel::contiguous_group(c, 32), 8);
  for (sim::Fidelity f : {sim::Fidelity::flow, sim::Fidelity::step})
    CHECK(sim::simulate_collective(c, CollectiveKind::all_reduce, 32, 8, f, CollectiveAlgo::tree) ==
          Approx(model).epsilon(0.02));
}

TEST_CASE("simulate_collective uses the tree where the model picks it", "[sim][collectives]") {
  const auto c = autoddl::sim_test::alpha_beta_cluster("dgx-a100", 8);
  const double bytes = 64 * 1024;  // small: the tree's fewer latency steps win
  const auto est = costmodel::collective_time(c, CollectiveKind::all_reduce, costmodel::contiguous_group(c, 64), bytes);
  REQUIRE(est.algo == CollectiveAlgo::tree);
  const double picked = sim::simulate_collective(c, CollectiveKind::all_reduce, 64, bytes, sim::Fidelity::flow);
  const double tree = sim::simulate_collective(c, CollectiveKind::all_reduce, 64, bytes, sim::Fidelity::flow,
                                               CollectiveAlgo::tree);
  CHECK(picked == tree);
}
