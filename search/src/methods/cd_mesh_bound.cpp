// The lower bounds of mesh_bound.hpp, from one set of cost tables on the mesh (one micro-batch,
// no recompute, ZeRO-3 storage and a sharded optimizer offered) over a GPU whose efficiency
// tables are made monotone.
#include <algorithm>
#include <limits>
#include <map>

#include "autoddl/costmodel/op_compute.hpp"

#include "autoddl/costmodel/timeline.hpp"
#include "autoddl/search/cost_tables.hpp"
#include "autoddl/search/mesh_bound.hpp"
#include "autoddl/search/pipeline.hpp"

namespace autoddl::search {

namespace {

// Each point's efficiency raised to the largest at any smaller size: never below the table (the
// interpolation of larger values is larger), and nondecreasing in FLOPs.
void running_max(std::vector<costmodel::EfficiencyPoint>& table) {
  for (size_t i = 1; i < table.size(); ++i) table[i].efficiency = std::max(table[i].efficiency, table[i - 1].efficiency);
}

}  // namespace

MeshBound mesh_lower_bound(const costmodel::Graph& g, const costmodel::ClusterSpec& c, const std::vector<int>& mesh,
                           int pipeline_dim) {
  costmodel::ClusterSpec fast = c;
  running_max(fast.gpu.matmul_efficiency);
  running_max(fast.gpu.matmul_efficiency_fp8);
  running_max(fast.gpu.conv_efficiency);
  TableOptions o;
  o.mesh_shape = mesh;
  o.pipeline_dim = pipeline_dim;
  o.micro_batches = 1;
  o.recompute = costmodel::Recompute::none;
  o.zero_storage = true;
  o.shard_optimizer = true;
  const CostTables t(g, fast, o);
  const int stages = pipeline_dim >= 0 ? mesh[pipeline_dim] : 1;
  MeshBound b;
  b.capacity_bytes = t.capacity_bytes(0);
  // Per recompute mode: the least over each op's choices, summed, and the largest op's least.
  constexpr costmodel::Recompute kModes[] = {costmodel::Recompute::none, costmodel::Recompute::selective,
                                             costmodel::Recompute::full};
  std::array<double, 3> compute{}, largest_s{};
  double memory = 0;
  std::map<const OpClass*, std::array<double, 3>> least_of;  // ops of one class share it
  for (int op = 0; op < t.ops(); ++op) {
    const OpClass& k = t.cls(op);
    if (k.n_choices == 0) continue;
    double least_bytes = std::numeric_limits<double>::infinity();
    for (int ch = 0; ch < k.n_choices; ++ch) {
      least_bytes = std::min(least_bytes, t.memory_bytes(op, ch) - t.activation_bytes(op, ch));
    }
    memory += std::max(0.0, least_bytes);
    auto it = least_of.find(&k);
    if (it == least_of.end()) {
      std::array<double, 3> least;
      least.fill(std::numeric_limits<double>::infinity());
      for (int ch = 0; ch < k.n_choices; ++ch) least[0] = std::min(least[0], k.compute_s[ch]);
      for (int r = 1; r < 3; ++r) {
        for (int s = 0; s < static_cast<int>(k.sigs.size()); ++s) {
          const costmodel::OpCompute oc = costmodel::op_compute(fast.gpu, g, g.ops[op], k.sigs[s], 1, kModes[r]);
          least[r] = std::min(least[r], oc.fwd_s + oc.bwd_s);
        }
        least[r] = std::max(least[r], least[0]);  // recompute only adds
      }
      it = least_of.emplace(&k, least).first;
    }
    for (int r = 0; r < 3; ++r) {
      compute[r] += it->second[r];
      largest_s[r] = std::max(largest_s[r], it->second[r]);
    }
  }
  int layers = 0;
  layer_of_ops(g, layers);
  const int most_chunks = std::max(1, layers / stages);
  for (int r = 0; r < 3; ++r) {
    double stage = compute[r] / stages;
    if (stages > 1) stage = std::max(stage, largest_s[r]);
    b.stage_compute_by_recompute_s[r] = stage;
  }
  b.stage_compute_s = b.stage_compute_by_recompute_s[0];
  b.iteration_s = b.stage_compute_s;
  if (stages > 1) {
    b.iteration_s = b.stage_compute_s * costmodel::pipeline_bubble_factor(stages, most_chunks, static_cast<double>(g.batch));
  }
  b.memory_bytes = memory / stages;
  return b;
}

}  // namespace autoddl::search
