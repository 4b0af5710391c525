// The non-ring algorithms of the simulator's table against costmodel's formulas for the same
// algorithm, uncontended: hierarchical all-reduce / all-gather / reduce-scatter, direct
// all-to-all and send/recv; and every table row runs.
#include <catch2/catch.hpp>
#include "../alpha_beta_cluster.hpp"

#include <cmath>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/collective.hpp"
#include "autoddl/sim/collectives.hpp"
#include "autoddl/sim/simulate.hpp"

using namespace autoddl;
using costmodel::CollectiveAlgo;
using costmodel::CollectiveKind;

namespace {
double rel_error(const costmodel::ClusterSpec& c, CollectiveKind kind, CollectiveAlgo algo, int ranks, double bytes,
                 sim::Fidelity f) {
  const double simulated = sim::simulate_collective(c, kind, ranks, bytes, f, algo);
  const double model = costmodel::collective_algo_time_s(c, kind, algo, costmodel::contiguous_group(c, ranks), bytes);
  return std::abs(simulated - model) / model;
}
}  // namespace

TEST_CASE("hierarchical collectives match costmodel's hierarchical formula within 1%", "[sim][collectives]") {
  const auto c = autoddl::sim_test::alpha_beta_cluster("dgx-a100", 4);
  for (CollectiveKind kind : {CollectiveKind::all_reduce, CollectiveKind::all_gather, CollectiveKind::reduce_scatter}) {
    for (double bytes : {4096.0, 64e6, 1e9}) {
      for (sim::Fidelity f : {sim::Fidelity::step, sim::Fidelity::flow}) {
        INFO(costmodel::collective_info(kind).name << " " << bytes << " B " << sim::fidelity_name(f));
        CHECK(rel_error(c, kind, CollectiveAlgo::hierarchical, 32, bytes, f) < 0.01);
      }
    }
  }
}

TEST_CASE("send/recv takes α + S·β inside a node and through one NIC across nodes", "[sim][collectives]") {
  const auto c = autoddl::sim_test::alpha_beta_cluster("dgx-a100", 2);
  for (int ranks : {2, 16}) {  // rank 0 -> rank 1 (NVSwitch), rank 0 -> rank 15 (network)
    for (double bytes : {1024.0, 256e6}) {
      INFO("ranks " << ranks << ", " << bytes << " B");
      CHECK(rel_error(c, CollectiveKind::send_recv, CollectiveAlgo::direct, ranks, bytes, sim::Fidelity::step) < 0.01);
    }
  }
}

TEST_CASE("direct all-to-all matches costmodel's direct formula within 1% inside a node and 5% across nodes",
          "[sim][collectives]") {
  const auto c = autoddl::sim_test::alpha_beta_cluster("dgx-a100", 2);
  for (sim::Fidelity f : {sim::Fidelity::step, sim::Fidelity::flow}) {
    INFO(sim::fidelity_name(f));
    CHECK(rel_error(c, CollectiveKind::all_to_all, CollectiveAlgo::direct, 8, 256e6, f) < 0.01);
    CHECK(rel_error(c, CollectiveKind::all_to_all, CollectiveAlgo::direct, 16, 256e6, f) < 0.05);
  }
}

TEST_CASE("every row of the collective table runs on a group it applies to", "[sim][collectives]") {
  const auto c = autoddl::sim_test::alpha_beta_cluster("dgx-a100", 2);
  for (const auto& row : sim::collective_algorithms()) {
    INFO(row.name);
    const int ranks = row.kind == CollectiveKind::send_recv ? 2 : 16;
    REQUIRE(row.applies(ranks, row.kind == CollectiveKind::send_recv ? 2 : 8));
    const double t = sim::simulate_collective(c, row.kind, ranks, 1e6, sim::Fidelity::step, row.algo);
    CHECK(t > 0);
    CHECK(std::isfinite(t));
  }
}

TEST_CASE("simulate_collective without an algorithm follows the analytical model's choice", "[sim][collectives]") {
  const auto c = autoddl::sim_test::alpha_beta_cluster("dgx-a100", 4);
  int compared = 0;
  for (CollectiveKind kind : {CollectiveKind::all_reduce, CollectiveKind::all_gather, CollectiveKind::reduce_scatter,
                              CollectiveKind::all_to_all, CollectiveKind::send_recv}) {
    for (double bytes : {8192.0, 1e9}) {
      const auto est = costmodel::collective_time(c, kind, costmodel::contiguous_group(c, 32), bytes);
      if (!sim::find_collective_algorithm(kind, est.algo)) continue;  // tree: the simulator runs ring instead
      INFO(costmodel::collective_info(kind).name << " " << bytes << " B, model picks "
                                                 << costmodel::collective_algo_name(est.algo));
      const double t = sim::simulate_collective(c, kind, 32, bytes, sim::Fidelity::flow);
      CHECK(t == Approx(est.time_s).epsilon(kind == CollectiveKind::all_to_all ? 0.05 : 0.01));
      ++compared;
    }
  }
  CHECK(compared >= 6);
}

TEST_CASE("hierarchical all-reduce uses every NIC when a node has more NICs than ranks in the group",
          "[sim][collectives]") {
  auto c = autoddl::sim_test::alpha_beta_cluster("dgx-a100", 4);  // 8 NICs per node
  c.gpus_per_node = 4;                                  // 4 ranks per node share them
  for (sim::Fidelity f : {sim::Fidelity::step, sim::Fidelity::flow}) {
    INFO(sim::fidelity_name(f));
    CHECK(rel_error(c, CollectiveKind::all_reduce, CollectiveAlgo::hierarchical, 16, 1e9, f) < 0.01);
  }
}
