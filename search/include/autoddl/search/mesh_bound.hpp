// Cheap lower bounds of what any scheme on a mesh can reach, so that `cd-mesh` spends no time on
// meshes that cannot win (search/src/methods/cd_mesh.cpp).
//
// Time: every device of a stage runs its share of every op of the stage, forward and backward,
// one kernel after another on its compute stream, so evaluate()'s iteration time is at least the
// slowest stage's compute, which is at least the total over stages / S. Per op the least compute
// over its legal signatures on the SBP dims (op_compute at one micro-batch, no recompute) with
// the GPU's efficiency tables replaced by their running maximum (monotone in FLOPs, never below
// the real table): then m micro-batches cost at least one (m · t(f/m) ≥ t(f) when efficiency
// does not fall with size), recompute only adds, and communication, bubbles and the optimizer
// step are not counted at all.
// With a pipeline of S stages the slowest stage also holds at least the op with the most
// compute (an op is never split over stages), and evaluate() adds the bubble (S − 1)/v times the
// slowest stage's per-micro-batch time: the bound is max(total / S, largest op) times
// 1 + (S − 1)/(v·m) at the most chunks v (layers / S) and micro-batches m (the batch) any
// searched scheme uses; configurations with fewer are bounded by stage_compute_s times their own
// factor (search_context.cpp).
// Recompute only adds: per recompute mode (none, selective, full) the same least compute with
// that mode's recompute forward charged (op_compute) bounds every configuration using it; with
// the GPT-3 case's best found near 84 s and 75 s of compute, full recompute's extra forward
// (~25%) alone rules out its configurations on every mesh (search_context.cpp).
// Memory: parameters, gradients and optimizer state at their least over the op's choices
// (ZeRO-3 storage, sharded optimizer), activations not counted; on S stages the fullest holds
// at least the total / S. A mesh whose memory bound exceeds the GPU cannot hold any scheme.
#pragma once
#include <array>
#include <vector>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/graph.hpp"

namespace autoddl::search {

struct MeshBound {
  double iteration_s = 0;        // ≤ evaluate()'s iteration time of any scheme on the mesh
  double stage_compute_s = 0;    // ≤ the slowest stage's compute per iteration (no bubble)
  // The same with each recompute mode's extra forward: [none, selective, full] (none =
  // stage_compute_s).
  std::array<double, 3> stage_compute_by_recompute_s{};
  double memory_bytes = 0;       // ≤ the peak memory per device of any scheme on the mesh
  double capacity_bytes = 0;     // the GPU's
  bool fits() const { return memory_bytes <= capacity_bytes; }
};

// mesh: the whole mesh; pipeline_dim: its stage dim or -1.
MeshBound mesh_lower_bound(const costmodel::Graph& g, const costmodel::ClusterSpec& c, const std::vector<int>& mesh,
                           int pipeline_dim);

}  // namespace autoddl::search
