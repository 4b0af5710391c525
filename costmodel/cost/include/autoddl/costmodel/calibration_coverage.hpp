// Calibration coverage: the collectives one scheme runs (kind, group shape, size range), read off
// the IterationPlan evaluate() priced, and for each where a calibrated cluster's time comes from:
// measured with this very group shape and concurrency (inside or outside the measured sizes),
// fitted from other shapes (the NCCL-model or link tier), or left to the cluster preset's model.
// It answers "which of this plan's numbers did my nccl-tests logs actually measure?"
// (`autoddl cost` on a calibrated cluster, `autoddl fit --scheme`), and lists what
// `autoddl calibrate --plan-for` turns into nccl-tests commands.
#pragma once
#include <string_view>
#include <vector>

#include "autoddl/costmodel/calibration.hpp"
#include "autoddl/costmodel/iteration_plan.hpp"

namespace autoddl::costmodel {

enum class CoverageSource : uint8_t {
  measured,               // this shape measured, and every size the plan needs inside its sizes
  measured_extrapolated,  // this shape measured, but some size falls outside the measured sizes
  nccl_model_fit,         // NCCL's model with a tier fitted on other shapes
  link_tier_fit,          // the ring model on a link tier fitted on other shapes
  cluster_model,          // nothing calibrated applies: the preset's NCCL / α-β model
};
std::string_view coverage_source_name(CoverageSource s);  // "measured", "nccl-model fit", ...

// One (collective kind, mesh dim) the plan runs. Sizes are nccl-tests sizes S (the bytes of the
// collective's buffer, as nccl-tests' -b/-e take them), over all of the plan's steps.
struct CollectiveNeed {
  CollectiveKind kind = CollectiveKind::all_reduce;
  int mesh_dim = 0;        // in the whole mesh (the pipeline dim included)
  bool stage_send = false;  // the pipeline's stage-boundary sends (mesh_dim is the pipeline dim)
  CommGroup group;         // one group's ranks and ranks per node
  int groups_per_node = 1;  // groups of this dim running at once with members in one node
  int stride = 1;          // GPU-id distance between neighbours in a group
  bool crosses_nodes = false;
  double min_bytes = 0, max_bytes = 0;
  int steps = 0;           // planned steps (per micro-batch for boxing, per iteration for sync)
  CoverageSource source = CoverageSource::cluster_model;
  // The measured entry's sizes, when source is measured or measured_extrapolated.
  double measured_min_bytes = 0, measured_max_bytes = 0;
  bool calibration_applies = true;  // false: this cost never reads a calibration (stage sends)
};

// The plan's collectives grouped by (mesh dim, kind), in mesh-dim then kind order, classified
// against plan.sbp_mesh.calibration (all cluster_model when there is none).
std::vector<CollectiveNeed> collectives_needed(const IterationPlan& plan);

}  // namespace autoddl::costmodel
