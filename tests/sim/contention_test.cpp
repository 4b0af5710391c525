// Contention: links shared by concurrent collectives slow them down exactly where they are
// shared (two all-reduces through one NIC, cross-leaf traffic on an oversubscribed fat tree),
// and nowhere else.
#include <catch2/catch.hpp>

#include <string>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/sim/simulate.hpp"

using namespace autoddl;
using costmodel::CollectiveAlgo;
using costmodel::CollectiveKind;

namespace {
// Iteration time of all-reduces of `bytes` over each group, all started at once.
sim::SimResult concurrent_all_reduces(const costmodel::ClusterSpec& c, const std::vector<std::vector<int>>& groups,
                                      double bytes, sim::Fidelity f) {
  sim::Program p(c.total_gpus());
  for (const auto& g : groups) p.collective(CollectiveKind::all_reduce, g, bytes);
  sim::SimOptions o;
  o.fidelity = f;
  return sim::simulate(p, c, o);
}
}  // namespace

TEST_CASE("two all-reduces forced through one shared NIC take at least 1.9x one alone", "[sim][contention]") {
  const auto c = costmodel::resolve_cluster("dgx-a100", 2);
  for (sim::Fidelity f : {sim::Fidelity::step, sim::Fidelity::flow}) {
    INFO(sim::fidelity_name(f));
    // GPU 0 and GPU 1 of node 0 each all-reduce with their peer on node 1: both rings cross
    // node0-nic and node1-nic in both directions.
    const double alone = concurrent_all_reduces(c, {{0, 8}}, 1e9, f).iteration_s;
    const auto both = concurrent_all_reduces(c, {{0, 8}, {1, 9}}, 1e9, f);
    WARN(sim::fidelity_name(f) << ": two all-reduces through one NIC / one alone = " << both.iteration_s / alone);
    CHECK(both.iteration_s >= 1.9 * alone);
    // The report names the shared NICs among the saturated links.
    bool nic_saturated = false;
    for (const auto& l : both.busiest_links)
      nic_saturated |= l.name.find("-nic-") != std::string::npos && l.utilization > 0.95;
    CHECK(nic_saturated);
  }
}

TEST_CASE("two all-reduces on disjoint links take no longer than one", "[sim][contention]") {
  const auto c = costmodel::resolve_cluster("dgx-a100", 2);
  const double alone = concurrent_all_reduces(c, {{0, 1}}, 1e9, sim::Fidelity::step).iteration_s;
  const double both = concurrent_all_reduces(c, {{0, 1}, {8, 9}}, 1e9, sim::Fidelity::step).iteration_s;
  CHECK(both == Approx(alone).epsilon(1e-6));
}

TEST_CASE("cross-leaf traffic on a 4:1 oversubscribed fat tree is 4x slower than within a leaf",
          "[sim][contention][platform]") {
  auto c = costmodel::resolve_cluster("piz-daint", 32);  // 1 GPU per node
  c.inter.topology = "fat-tree";
  c.inter.oversubscription = 4;  // 2 leaves of 16 nodes, 4 uplinks each at one NIC's bandwidth
  auto transfers = [&](const std::vector<std::pair<int, int>>& pairs) {
    sim::Program p(32);
    for (auto [src, dst] : pairs) p.send_recv(src, dst, 1e9);
    return sim::simulate(p, c).iteration_s;
  };
  std::vector<std::pair<int, int>> within, across;
  for (int i = 0; i < 8; ++i) {
    within.push_back({i, i + 8});         // leaf 0 to leaf 0
    within.push_back({16 + i, 24 + i});   // leaf 1 to leaf 1
  }
  for (int i = 0; i < 16; ++i) across.push_back({i, i + 16});  // 16 flows over 4 uplinks
  const double one = transfers({{0, 16}});
  CHECK(transfers(within) == Approx(one).epsilon(1e-3));
  CHECK(transfers(across) == Approx(4 * one).epsilon(0.01));
}
