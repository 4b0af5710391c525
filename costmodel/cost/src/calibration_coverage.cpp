// Calibration coverage (see calibration_coverage.hpp): a walk over the IterationPlan's collective
// steps, grouped by (mesh dim, kind), each group classified the way DeviceMesh::collective picks
// its time, so the listing cannot claim a source the pricing does not use.
#include "autoddl/costmodel/calibration_coverage.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace autoddl::costmodel {

std::string_view coverage_source_name(CoverageSource s) {
  switch (s) {
    case CoverageSource::measured: return "measured";
    case CoverageSource::measured_extrapolated: return "measured, sizes extrapolated";
    case CoverageSource::nccl_model_fit: return "not measured: nccl-model fit of other shapes";
    case CoverageSource::link_tier_fit: return "not measured: link-tier fit of other shapes";
    case CoverageSource::cluster_model: return "not measured: cluster model";
  }
  return "?";
}

namespace {

struct Range {
  double min_bytes = 0, max_bytes = 0;
  int steps = 0;
  void add(double bytes) {
    if (bytes <= 0) return;
    min_bytes = steps == 0 ? bytes : std::min(min_bytes, bytes);
    max_bytes = std::max(max_bytes, bytes);
    ++steps;
  }
};

// The mesh dim of SBP dim `sbp_dim` (the plan's BoxingStep::dim).
int mesh_dim_of(const IterationPlan& plan, int sbp_dim) {
  for (size_t d = 0; d < plan.sbp_dim_of_mesh.size(); ++d)
    if (plan.sbp_dim_of_mesh[d] == sbp_dim) return static_cast<int>(d);
  return sbp_dim;
}

// A need on mesh dim `mesh_dim` (m): its group shape from the dim, its sizes from `r`.
CollectiveNeed need_on(const MeshDim& m, int mesh_dim, CollectiveKind kind, const Range& r) {
  CollectiveNeed n;
  n.kind = kind;
  n.mesh_dim = mesh_dim;
  n.group = {m.size, m.ranks_per_node};
  n.groups_per_node = m.groups_per_node;
  n.stride = m.stride;
  n.crosses_nodes = m.crosses_nodes;
  n.min_bytes = r.min_bytes;
  n.max_bytes = r.max_bytes;
  n.steps = r.steps;
  return n;
}

void classify(CollectiveNeed& n, const IterationPlan& plan, int sbp_dim) {
  const Calibration* cal = plan.sbp_mesh.calibration.get();
  if (!cal) return;
  switch (plan.sbp_mesh.calibration_match(sbp_dim, n.kind)) {
    case CalibrationMatch::measured: {
      n.source = CoverageSource::measured;
      const CollectiveCalibration* e = cal->find(n.kind, n.group, n.groups_per_node);
      if (e && !e->measured.empty()) {
        n.measured_min_bytes = e->measured.front().bytes;
        n.measured_max_bytes = e->measured.back().bytes;
        // 0.1% slack: sizes are doubles that went through JSON.
        if (n.min_bytes < n.measured_min_bytes * 0.999 || n.max_bytes > n.measured_max_bytes * 1.001)
          n.source = CoverageSource::measured_extrapolated;
      }
      break;
    }
    case CalibrationMatch::nccl_model: n.source = CoverageSource::nccl_model_fit; break;
    case CalibrationMatch::link_tier: n.source = CoverageSource::link_tier_fit; break;
    case CalibrationMatch::none: n.source = CoverageSource::cluster_model; break;
  }
}

}  // namespace

std::vector<CollectiveNeed> collectives_needed(const IterationPlan& plan) {
  // (SBP dim, kind) -> sizes; the pipeline's sends keyed apart (dim -1).
  std::map<std::pair<int, CollectiveKind>, Range> ranges;
  auto add_steps = [&](const std::vector<BoxingStep>& steps) {
    for (const BoxingStep& s : steps) ranges[{s.dim, s.kind}].add(s.bytes);
  };
  Range sends;
  for (const PlannedOp& op : plan.ops) {
    for (const PlannedInput& in : op.inputs) {
      add_steps(in.fwd);
      add_steps(in.bwd);
      add_steps(in.fwd_send_gather);
      add_steps(in.bwd_send_gather);
      add_steps(in.bwd_regather);
      if (in.cross_stage) {
        sends.add(in.fwd_send_bytes);
        if (in.bwd_send) sends.add(in.bwd_send_bytes);
      }
    }
  }
  for (const auto& stage : plan.buckets)
    for (const PlannedBucket& b : stage) add_steps(b.steps);
  for (const auto& stage : plan.param_gathers)
    for (const PlannedBucket& b : stage) add_steps(b.steps);

  std::vector<CollectiveNeed> out;
  for (const auto& [key, r] : ranges) {
    if (r.steps == 0) continue;
    const MeshDim& m = plan.sbp_mesh.dims[key.first];
    CollectiveNeed n = need_on(m, mesh_dim_of(plan, key.first), key.second, r);
    classify(n, plan, key.first);
    out.push_back(n);
  }
  if (sends.steps > 0 && plan.pipeline_dim >= 0) {
    // Stage-boundary sends are priced on the pipeline dim's link tier (eval_frame.cpp), which no
    // calibration changes: listed so a user sees that they are not measured.
    const MeshDim& m = plan.mesh.dims[plan.pipeline_dim];
    CollectiveNeed n = need_on(m, plan.pipeline_dim, CollectiveKind::send_recv, sends);
    n.stage_send = true;
    n.group = {2, m.crosses_nodes ? 1 : 2};  // a send pairs two neighbouring stages
    n.calibration_applies = false;
    out.push_back(n);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const CollectiveNeed& a, const CollectiveNeed& b) { return a.mesh_dim < b.mesh_dim; });
  return out;
}

}  // namespace autoddl::costmodel
