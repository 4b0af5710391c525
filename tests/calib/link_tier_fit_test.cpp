// Link tiers fitted over group shapes: the fit recovers the parameters that made the points,
// a never-measured shape is priced from the tier, concurrency is part of the key, and the
// calibration JSON keeps its old form when there are no tiers (issue 16, "fit the link tiers").
#include <catch2/catch.hpp>

#include "autoddl/calib/link_tier_fit.hpp"

using namespace autoddl::calib;
using autoddl::costmodel::Calibration;
using autoddl::costmodel::CalibrationMatch;
using autoddl::costmodel::CollectiveKind;
using autoddl::costmodel::CommGroup;

namespace {

// Points of fixed + ring time for `kind` over `g`, 8 B .. 1 GiB.
ShapePoints shape(CollectiveKind kind, CommGroup g, int groups, double fixed, double alpha, double beta) {
  ShapePoints s{kind, g, groups, {}, {}};
  const auto& info = autoddl::costmodel::collective_info(kind);
  for (double b = 8; b <= (1 << 30); b *= 4) {
    s.points.push_back({b, fixed + info.latency_steps(g.ranks) * alpha + info.bw_factor(g.ranks) * b * beta});
  }
  return s;
}

}  // namespace

TEST_CASE("the tier fit recovers fixed cost, per-step latency and bandwidth, held-out error per shape",
          "[calib][link_tier]") {
  std::vector<ShapePoints> shapes;
  for (int p : {2, 4, 8}) {
    shapes.push_back(shape(CollectiveKind::all_reduce, {p, p}, 1, 8e-6, 0.5e-6, 1 / 350e9));
    shapes.push_back(shape(CollectiveKind::all_gather, {p, p}, 1, 8e-6, 0.5e-6, 1 / 350e9));
  }
  for (int n : {2, 4}) shapes.push_back(shape(CollectiveKind::all_reduce, {n, 1}, 8, 25e-6, 2e-6, 1 / 20e9));
  shapes.push_back(shape(CollectiveKind::all_to_all, {8, 8}, 1, 1e-5, 1e-6, 1e-11));  // not a ring: left out
  const std::vector<LinkTierFitRow> tiers = fit_link_tiers(shapes);
  REQUIRE(tiers.size() == 2);
  CHECK_FALSE(tiers[0].tier.inter_node);
  CHECK(tiers[0].tier.shapes == 6);
  CHECK(tiers[0].tier.fixed_s == Approx(8e-6).epsilon(1e-6));
  CHECK(tiers[0].tier.alpha_s == Approx(0.5e-6).epsilon(1e-6));
  CHECK(tiers[0].tier.beta_s_per_byte == Approx(1 / 350e9).epsilon(1e-6));
  CHECK(tiers[0].holdout.size() == 6);
  CHECK(*tiers[0].tier.holdout_rel_error < 1e-6);
  CHECK(tiers[1].tier.inter_node);
  CHECK((tiers[1].tier.ranks_per_node == 1 && tiers[1].tier.groups_per_node == 8));

  Calibration cal;
  for (const LinkTierFitRow& t : tiers) cal.link_tiers.push_back(t.tier);
  CalibrationMatch how = CalibrationMatch::none;
  // 6 GPUs of a node and 8 nodes x 8 groups: never measured, priced by their tier exactly.
  const double t6 = cal.collective_time_s(CollectiveKind::reduce_scatter, {6, 6}, 1, 1e8, &how);
  CHECK(how == CalibrationMatch::link_tier);
  CHECK(t6 == Approx(8e-6 + 5 * 0.5e-6 + 5.0 / 6 * 1e8 / 350e9));
  CHECK(cal.collective_time_s(CollectiveKind::all_reduce, {8, 1}, 8, 1e8, &how) > 0);
  CHECK(how == CalibrationMatch::link_tier);
  // One group alone per node: a different NIC load (1 x 1), no tier for it.
  CHECK(cal.collective_time_s(CollectiveKind::all_reduce, {8, 1}, 1, 1e8, &how) < 0);
  CHECK(how == CalibrationMatch::none);
  CHECK(cal.collective_time_s(CollectiveKind::all_to_all, {6, 6}, 1, 1e8) < 0);
}

TEST_CASE("groups_per_node and link_tiers round-trip in the calibration JSON and stay optional",
          "[calib][link_tier]") {
  using namespace autoddl::costmodel;
  Calibration c;
  c.provenance = {"NVIDIA H100", "2025-01-01T00:00:00Z", "test", {}};
  CollectiveCalibration shared;
  shared.kind = CollectiveKind::all_reduce;
  shared.group = {4, 1};
  shared.groups_per_node = 8;
  shared.source = "replay";
  shared.measured = {{1e6, 1e-4}, {1e9, 5e-2}};
  c.collectives.push_back(shared);
  CollectiveCalibration alone = shared;
  alone.groups_per_node = 1;
  alone.measured = {{1e6, 5e-5}, {1e9, 2e-2}};
  c.collectives.push_back(alone);
  LinkTierCalibration tier;
  tier.inter_node = true;
  tier.ranks_per_node = 1;
  tier.groups_per_node = 8;
  tier.fixed_s = 2e-5;
  tier.alpha_s = 1e-6;
  tier.beta_s_per_byte = 5e-11;
  tier.shapes = 2;
  c.link_tiers.push_back(tier);
  const nlohmann::json j = calibration_to_json(c);
  CHECK(j["collectives"][0]["groups_per_node"] == 8);
  CHECK_FALSE(j["collectives"][1].contains("groups_per_node"));  // old files read the same
  const Calibration back = calibration_from_json(j, "cal.json");
  CHECK(back.collective_time_s(CollectiveKind::all_reduce, {4, 1}, 8, 1e9) == Approx(5e-2));
  CHECK(back.collective_time_s(CollectiveKind::all_reduce, {4, 1}, 1e9) == Approx(2e-2));
  REQUIRE(back.link_tiers.size() == 1);
  CHECK(back.link_tiers[0].fixed_s == 2e-5);

  nlohmann::json old = j;
  old.erase("link_tiers");
  old["collectives"].erase(0);
  CHECK(calibration_from_json(old, "old.json").link_tiers.empty());
  nlohmann::json dup = j;
  dup["collectives"][1]["groups_per_node"] = 8;
  CHECK_THROWS_WITH(calibration_from_json(dup, "cal.json"),
                    Catch::Contains("duplicate entry for all_reduce over 4 ranks, 1 per node, 8 groups per node"));
  nlohmann::json bad = j;
  bad["link_tiers"][0]["tier"] = "rack";
  CHECK_THROWS_WITH(calibration_from_json(bad, "cal.json"), Catch::Contains("link_tiers[0].tier"));
}
