// The lower bounds of mesh_bound.hpp, from one set of cost tables on the mesh (one micro-batch,
// no recompute, ZeRO-3 storage and a sharded optimizer offered) over a GPU whose efficiency
// tables are made monotone.
#include <algorithm>
#include <limits>

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
  double compute = 0, memory = 0, largest_s = 0;
  for (int op = 0; op < t.ops(); ++op) {
    const OpClass& k = t.cls(op);
    double least_s = std::numeric_limits<double>::infinity(), least_bytes = least_s;
    for (int ch = 0; ch < k.n_choices; ++ch) {
      least_s = std::min(least_s, k.compute_s[ch]);
      least_bytes = std::min(least_bytes, t.memory_bytes(op, ch) - t.activation_bytes(op, ch));
    }
    if (k.n_choices > 0) {
      compute += least_s;
      largest_s = std::max(largest_s, least_s);
      memory += std::max(0.0, least_bytes);
    }
  }
  b.stage_compute_s = compute / stages;
  b.iteration_s = b.stage_compute_s;
  if (stages > 1) {
    b.stage_compute_s = std::max(b.stage_compute_s, largest_s);
    int layers = 0;
    layer_of_ops(g, layers);
    const int most_chunks = std::max(1, layers / stages);
    b.iteration_s = b.stage_compute_s * costmodel::pipeline_bubble_factor(stages, most_chunks, static_cast<double>(g.batch));
  }
  b.memory_bytes = memory / stages;
  return b;
}

}  // namespace autoddl::search
