// Link tiers fitted over several measured group shapes (issue 16, "fit the link tiers"): a fixed
// cost plus the ring model latency_steps(p)·α + bw_factor(p)·S·β (costmodel::ring_time_s), one
// set per tier, so that group shapes nobody measured (6 GPUs of a node, 8 nodes when 2 and 4 were
// measured) still get calibrated numbers. Tiers: intra-node (every group inside one node), and
// inter-node per (ranks per node, groups per node), since groups that share a node's NICs see a
// different bandwidth than a group alone. Only all_reduce, all_gather and reduce_scatter, the
// collectives the ring model describes, are fitted.
#pragma once
#include <optional>
#include <vector>

#include "autoddl/calib/alpha_beta_fit.hpp"
#include "autoddl/calib/nccl_debug_log.hpp"
#include "autoddl/costmodel/calibration.hpp"

namespace autoddl::calib {

// The merged (bytes, time) points of one measured group shape.
struct ShapePoints {
  costmodel::CollectiveKind kind = costmodel::CollectiveKind::all_reduce;
  costmodel::CommGroup group;
  int groups_per_node = 1;
  std::vector<SizeTime> points;
  // NCCL's logged algorithm and protocol per point (parallel to points; empty: none recorded).
  std::vector<std::optional<NcclChoice>> choices;
};

// Mean |relative error| on one shape when the tier is fitted without it.
struct ShapeHoldout {
  costmodel::CollectiveKind kind = costmodel::CollectiveKind::all_reduce;
  costmodel::CommGroup group;
  int groups_per_node = 1;
  double rel_error = 0;
};

struct LinkTierFitRow {
  costmodel::LinkTierCalibration tier;
  std::vector<ShapeHoldout> holdout;  // empty when the tier has a single shape
};

// Leave-one-out over a tier's members (pointers to shapes or to anything with a `->points`
// ShapePoints*, via `shape_of`): member i's error when the tier is fitted on the others
// (`error_without(rest, member)`), one ShapeHoldout per member in `holdout`; returns their mean,
// or nullopt with fewer than two members.
template <class Member, class ShapeOf, class ErrorWithout>
std::optional<double> leave_one_out(const std::vector<Member>& members, ShapeOf shape_of, ErrorWithout error_without,
                                    std::vector<ShapeHoldout>& holdout) {
  if (members.size() < 2) return std::nullopt;
  double sum = 0;
  for (size_t i = 0; i < members.size(); ++i) {
    std::vector<Member> rest;
    for (size_t j = 0; j < members.size(); ++j) {
      if (j != i) rest.push_back(members[j]);
    }
    const ShapePoints& s = shape_of(members[i]);
    holdout.push_back({s.kind, s.group, s.groups_per_node, error_without(rest, members[i])});
    sum += holdout.back().rel_error;
  }
  return sum / members.size();
}

// Weighted by 1/t like fit_alpha_beta (relative error); every coefficient ≥ 0. Tiers are returned intra-node
// first, then inter-node by ranks per node and groups per node.
std::vector<LinkTierFitRow> fit_link_tiers(const std::vector<ShapePoints>& shapes);

}  // namespace autoddl::calib
