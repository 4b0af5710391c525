// Uncontended ring collectives in the simulator against costmodel's α-β ring formula
// (ring_time_s on the ring's slowest tier, as collective_algo_time_s(..., ring, ...) computes
// it): within 1% from 1 KiB to 1 GiB and 2 to 64 ranks, in both fidelities, on a fat tree of
// 8-GPU NVSwitch nodes, on a star of 4-GPU PCIe nodes and on a star of 1-GPU nodes.
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

std::vector<double> sizes_1KiB_to_1GiB() {
  std::vector<double> s;
  for (double b = 1024; b <= 1024.0 * 1024 * 1024; b *= 8) s.push_back(b);
  s.push_back(1024.0 * 1024 * 1024);
  return s;
}

// Largest relative error of the simulated ring collective over the size sweep.
double max_rel_error(const costmodel::ClusterSpec& c, CollectiveKind kind, int ranks, sim::Fidelity f) {
  const auto sizes = sizes_1KiB_to_1GiB();
  const auto simulated = sim::simulate_collective_sweep(c, kind, ranks, sizes, f, CollectiveAlgo::ring);
  double worst = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const double model = costmodel::collective_algo_time_s(c, kind, CollectiveAlgo::ring,
                                                           costmodel::contiguous_group(c, ranks), sizes[i]);
    worst = std::max(worst, std::abs(simulated[i] - model) / model);
  }
  return worst;
}

}  // namespace

TEST_CASE("empty and tiny ring collectives cost their latency terms", "[sim][collectives]") {
  const auto c = autoddl::sim_test::alpha_beta_cluster("dgx-a100", 8);
  for (double bytes : {0.0, 8.0}) {
    const double simulated = sim::simulate_collective(c, CollectiveKind::all_reduce, 64, bytes, sim::Fidelity::step,
                                                      CollectiveAlgo::ring);
    const double model = costmodel::collective_algo_time_s(c, CollectiveKind::all_reduce, CollectiveAlgo::ring,
                                                           costmodel::contiguous_group(c, 64), bytes);
    CHECK(simulated == Approx(model).epsilon(0.01));
  }
}

TEST_CASE("ring all-reduce, all-gather and reduce-scatter match the α-β formula within 1% when uncontended",
          "[sim][collectives]") {
  struct Case {
    const char* preset;
    int nodes;
    std::vector<int> ranks;
  };
  const std::vector<Case> cases = {
      {"dgx-a100", 8, {2, 4, 8, 16, 32, 64}},  // fat tree, 8 GPUs per node
      {"autosync-b", 16, {2, 4, 16, 64}},      // star, 4 PCIe GPUs per node
      {"autosync-a", 11, {2, 3, 11}},          // star, 1 GPU per node
  };
  double worst = 0;
  for (const Case& cs : cases) {
    const auto c = autoddl::sim_test::alpha_beta_cluster(cs.preset, cs.nodes);
    for (CollectiveKind kind : {CollectiveKind::all_reduce, CollectiveKind::all_gather, CollectiveKind::reduce_scatter}) {
      for (int p : cs.ranks) {
        for (sim::Fidelity f : {sim::Fidelity::step, sim::Fidelity::flow}) {
          const double err = max_rel_error(c, kind, p, f);
          INFO(cs.preset << " " << costmodel::collective_info(kind).name << " p=" << p << " "
                         << sim::fidelity_name(f) << ": max relative error " << err);
          CHECK(err < 0.01);
          worst = std::max(worst, err);
        }
      }
    }
  }
  WARN("ring collectives vs α-β: max relative error " << worst);
}
