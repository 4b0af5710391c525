// Calibrated collectives in the simulator: a calibration that measured an all-reduce 2x slower
// than the α-β model makes the simulated all-reduce 2x slower (within 5%), in both fidelities;
// without a calibration (or for a group it did not measure) nothing changes.
#include <catch2/catch.hpp>
#include "alpha_beta_cluster.hpp"

#include <memory>

#include "autoddl/costmodel/calibration.hpp"
#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/collective.hpp"
#include "autoddl/sim/simulate.hpp"

using namespace autoddl;
using costmodel::CollectiveAlgo;
using costmodel::CollectiveKind;

namespace {

// A calibration whose one α-β band is `factor` times the ring all-reduce model over `grp`
// (the model is linear in S, so two points give its line).
std::shared_ptr<const costmodel::Calibration> slower_all_reduce(const costmodel::ClusterSpec& c,
                                                                const costmodel::CommGroup& grp, double factor) {
  const double t0 = costmodel::collective_algo_time_s(c, CollectiveKind::all_reduce, CollectiveAlgo::ring, grp, 0);
  const double t1 = costmodel::collective_algo_time_s(c, CollectiveKind::all_reduce, CollectiveAlgo::ring, grp, 1e9);
  costmodel::CollectiveCalibration cc;
  cc.kind = CollectiveKind::all_reduce;
  cc.group = grp;
  cc.bands.push_back({0, factor * t0, factor * (t1 - t0) / 1e9, std::nullopt});
  cc.source = "test: " + std::to_string(factor) + "x the ring model";
  auto cal = std::make_shared<costmodel::Calibration>();
  cal->collectives.push_back(cc);
  return cal;
}

}  // namespace

TEST_CASE("a calibration 2x slower than α-β makes the simulated all-reduce 2x slower", "[sim][calibration]") {
  const auto plain = autoddl::sim_test::alpha_beta_cluster("dgx-a100", 2);
  const auto grp = costmodel::contiguous_group(plain, 16);
  auto calibrated = plain;
  calibrated.calibration = slower_all_reduce(plain, grp, 2.0);
  for (sim::Fidelity f : {sim::Fidelity::step, sim::Fidelity::flow}) {
    for (double bytes : {8.0 * 1024, 1024.0 * 1024, 256.0 * 1024 * 1024}) {
      const double base = sim::simulate_collective(plain, CollectiveKind::all_reduce, 16, bytes, f, CollectiveAlgo::ring);
      const double model = costmodel::collective_algo_time_s(plain, CollectiveKind::all_reduce, CollectiveAlgo::ring,
                                                             grp, bytes);
      // Uncalibrated: unchanged (the ring matches α-β within 1%, ring_test.cpp).
      CHECK(base == Approx(model).epsilon(0.01));
      // Calibrated: the analytical pick is `calibrated`, so the simulator runs its default (ring).
      for (auto algo : {std::optional<CollectiveAlgo>(CollectiveAlgo::ring), std::optional<CollectiveAlgo>()}) {
        const double slow = sim::simulate_collective(calibrated, CollectiveKind::all_reduce, 16, bytes, f, algo);
        INFO(sim::fidelity_name(f) << " " << bytes << " bytes: " << slow / base << "x");
        CHECK(slow / base == Approx(2.0).epsilon(0.05));
      }
    }
  }
  // A group the calibration did not measure, and another kind, are unchanged.
  CHECK(sim::simulate_collective(calibrated, CollectiveKind::all_reduce, 8, 1 << 20, sim::Fidelity::flow,
                                 CollectiveAlgo::ring) ==
        sim::simulate_collective(plain, CollectiveKind::all_reduce, 8, 1 << 20, sim::Fidelity::flow,
                                 CollectiveAlgo::ring));
  CHECK(sim::simulate_collective(calibrated, CollectiveKind::all_gather, 16, 1 << 20, sim::Fidelity::flow,
                                 CollectiveAlgo::ring) ==
        sim::simulate_collective(plain, CollectiveKind::all_gather, 16, 1 << 20, sim::Fidelity::flow,
                                 CollectiveAlgo::ring));
}
