// Calibration coverage (issue 34 item 4): the collectives a plan runs, grouped by mesh dim and
// kind with their group shapes and sizes, and for each whether the cluster's calibration
// measured that shape (over those sizes), fitted it from other shapes, or left it to the preset.
#include <catch2/catch.hpp>

#include <memory>

#include "autoddl/costmodel/calibration_coverage.hpp"
#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/zoo.hpp"

using namespace autoddl::costmodel;

namespace {

const Graph& small_gpt() {
  static const Graph g = build_zoo_model("gpt", parse_knob_list("layers=2,hidden=1024,heads=16,seq=1024,batch=16"));
  return g;
}

std::vector<CollectiveNeed> needs_of(const ClusterSpec& c, const std::string& spec) {
  const Scheme s = make_scheme(spec, small_gpt(), c, {});
  IterationPlan plan;
  evaluate(small_gpt(), c, s, &plan);
  return collectives_needed(plan);
}

const CollectiveNeed* find_need(const std::vector<CollectiveNeed>& needs, int dim, CollectiveKind kind) {
  for (const CollectiveNeed& n : needs)
    if (n.mesh_dim == dim && n.kind == kind) return &n;
  return nullptr;
}

// A measured all-reduce table for one group shape over [lo, hi] bytes, faster than any model
// (5 us + S / 1 TB/s), so the boxing paths keep their all-reduces.
Calibration measured_all_reduce(CommGroup g, int groups_per_node, double lo, double hi) {
  CollectiveCalibration cc;
  cc.kind = CollectiveKind::all_reduce;
  cc.group = g;
  cc.groups_per_node = groups_per_node;
  for (double b = lo; b < hi; b *= 2) cc.measured.push_back({b, 5e-6 + b / 1e12});
  cc.measured.push_back({hi, 5e-6 + hi / 1e12});
  cc.source = "test";
  Calibration cal;
  cal.collectives.push_back(cc);
  return cal;
}

}  // namespace

TEST_CASE("without a calibration every collective of the plan is the cluster's model by dim and kind",
          "[costmodel][calibration]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 2);
  const auto needs = needs_of(c, "megatron:tp=8,pp=1,dp=2");
  // dp over the two nodes (one rank per node, the 8 dp groups share the NICs) and tp inside a node.
  const CollectiveNeed* dp = find_need(needs, 0, CollectiveKind::all_reduce);
  const CollectiveNeed* tp = find_need(needs, 1, CollectiveKind::all_reduce);
  REQUIRE(dp);
  REQUIRE(tp);
  CHECK(dp->group.ranks == 2);
  CHECK(dp->group.ranks_per_node == 1);
  CHECK(dp->groups_per_node == 8);
  CHECK(dp->stride == 8);
  CHECK(dp->crosses_nodes);
  CHECK(tp->group.ranks == 8);
  CHECK(tp->group.ranks_per_node == 8);
  CHECK_FALSE(tp->crosses_nodes);
  for (const CollectiveNeed& n : needs) {
    CHECK(n.source == CoverageSource::cluster_model);
    CHECK(n.min_bytes > 0);
    CHECK(n.min_bytes <= n.max_bytes);
    CHECK(n.steps > 0);
  }
}

TEST_CASE("a calibration that measured the tensor-parallel group shape covers that dim only",
          "[costmodel][calibration]") {
  ClusterSpec c = resolve_cluster("dgx-h100", 2);
  c.calibration = std::make_shared<const Calibration>(measured_all_reduce({8, 8}, 1, 8, double(1ull << 34)));
  const auto needs = needs_of(c, "megatron:tp=8,pp=1,dp=2");
  const CollectiveNeed* dp = find_need(needs, 0, CollectiveKind::all_reduce);
  const CollectiveNeed* tp = find_need(needs, 1, CollectiveKind::all_reduce);
  REQUIRE(dp);
  REQUIRE(tp);
  CHECK(tp->source == CoverageSource::measured);
  CHECK(tp->measured_min_bytes == 8);
  CHECK(tp->measured_max_bytes == double(1ull << 34));
  // Measured inside one node, so the cross-node dp dim is not measured; no tier was fitted.
  CHECK(dp->source == CoverageSource::cluster_model);
}

TEST_CASE("a measured shape whose sizes stop short of the plan's is flagged as extrapolated",
          "[costmodel][calibration]") {
  ClusterSpec c = resolve_cluster("dgx-h100", 2);
  c.calibration = std::make_shared<const Calibration>(measured_all_reduce({8, 8}, 1, 8, 1024));
  const auto needs = needs_of(c, "megatron:tp=8,pp=1,dp=2");
  const CollectiveNeed* tp = find_need(needs, 1, CollectiveKind::all_reduce);
  REQUIRE(tp);
  REQUIRE(tp->max_bytes > 1024);
  CHECK(tp->source == CoverageSource::measured_extrapolated);
  CHECK(tp->measured_max_bytes == 1024);
}

TEST_CASE("the measured shape must match the groups per node: concurrent groups share the NICs",
          "[costmodel][calibration]") {
  ClusterSpec c = resolve_cluster("dgx-h100", 2);
  // The dp groups (2 ranks, 1 per node) measured alone, where the plan runs 8 of them per node.
  c.calibration = std::make_shared<const Calibration>(measured_all_reduce({2, 1}, 1, 8, double(1ull << 34)));
  const auto alone = needs_of(c, "megatron:tp=8,pp=1,dp=2");  // kept: find_need points into it
  const CollectiveNeed* dp = find_need(alone, 0, CollectiveKind::all_reduce);
  REQUIRE(dp);
  CHECK(dp->source != CoverageSource::measured);
  c.calibration = std::make_shared<const Calibration>(measured_all_reduce({2, 1}, 8, 8, double(1ull << 34)));
  const auto shared = needs_of(c, "megatron:tp=8,pp=1,dp=2");
  const CollectiveNeed* dp8 = find_need(shared, 0, CollectiveKind::all_reduce);
  REQUIRE(dp8);
  CHECK(dp8->source == CoverageSource::measured);
}

TEST_CASE("pipeline stage sends are listed on the pipeline dim as never calibrated", "[costmodel][calibration]") {
  ClusterSpec c = resolve_cluster("dgx-h100", 2);
  c.calibration = std::make_shared<const Calibration>(measured_all_reduce({8, 8}, 1, 8, double(1ull << 34)));
  const auto needs = needs_of(c, "megatron:tp=8,pp=2,dp=1");
  const CollectiveNeed* sends = find_need(needs, 0, CollectiveKind::send_recv);
  REQUIRE(sends);
  CHECK(sends->stage_send);
  CHECK_FALSE(sends->calibration_applies);
  CHECK(sends->crosses_nodes);
  CHECK(sends->group.ranks == 2);
  CHECK(sends->min_bytes > 0);
  // tp is mesh dim 1 of the whole [pp, tp] mesh, not SBP dim 0.
  const CollectiveNeed* tp = find_need(needs, 1, CollectiveKind::all_reduce);
  REQUIRE(tp);
  CHECK(tp->source == CoverageSource::measured);
}
