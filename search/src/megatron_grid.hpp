// The Megatron-LM grid (Narayanan et al., SC'21): tp × pp × dp over every GPU, micro-batch size,
// sequence parallelism and recompute (none, then selective, then full: recompute only adds time,
// so the first that fits is kept per point). Each point is also tried with today's options on
// (dist_opt when dp > 1, tp_overlap with sp, and the interleaved schedule with pp_overlap at one
// layer per chunk), each with its own recompute walk,
// so a layout that only fits with the distributed optimizer, or is faster overlapped, is found. Each point is costmodel::make_scheme("megatron:...")
// priced by evaluate(); points Megatron-LM itself refuses (heads % tp) are skipped. A pp (or
// pp × interleave) that does not divide the layers gets Megatron-Core's
// --pipeline-model-parallel-layout, the work-balanced one (balanced_pipeline_layout), as layout=.
// Context parallelism (cp) is tried on dense models with fused attention whose sequence leaves
// each rank's two causal chunks at least 1,024 tokens (context_parallel_sizes).
// Exact shortcuts of the walk (the same grid as pricing every point in full): a point is first
// checked by memory_fit and priced by evaluate() only when it fits; a layout's larger micro-batches
// are skipped once every recompute mode ran out of memory (peak memory grows with mb); boxing
// tables are shared by a task's points (EvalCache); schemes are made again only for kept points.
// Shared by the `megatron` baseline (its best point) and `cd-expert` (descent from `starts`).
#pragma once
#include <map>
#include <utility>
#include <vector>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/cost_report.hpp"
#include "autoddl/costmodel/graph.hpp"
#include "autoddl/costmodel/scheme.hpp"

namespace autoddl::search {

struct GridPoint {
  costmodel::Scheme scheme;
  costmodel::CostReport report;
};

struct MegatronGrid {
  // The `keep` best points: feasible ones by iteration time, then infeasible ones by memory.
  std::vector<GridPoint> best;
  // The best point per Megatron mesh ([pp, dp, tp] without its size-1 dims) and pipeline dim
  // (0 or -1): where cd-mesh starts on that mesh, and the iteration it must beat there.
  std::map<std::pair<std::vector<int>, int>, GridPoint> best_by_mesh;
  // On a Mixture-of-Experts model, the best point per expert layout ("ep=4", "ep=8,etp=1";
  // "" for experts replicated): what `search --explain` compares the chosen ep/etp with.
  std::map<std::string, GridPoint> best_by_experts;
  // cd-expert's starts: the `keep` best points without context parallelism, then the best point
  // with it (when the model has one). The best few overall can all be cp layouts of one family,
  // and a descent from them alone ended slower than one from the best plain layout.
  std::vector<GridPoint> starts;
  int points = 0, feasible = 0;
  bool truncated = false;  // the time limit stopped the walk
  double seconds = 0;      // the walk's wall time
};

constexpr int kGridKeep = 3;  // points a SearchContext keeps (cd-expert's starts)

// jobs: threads pricing the points (the grid is the same for any number).
MegatronGrid megatron_grid(const costmodel::Graph& g, const costmodel::ClusterSpec& c, double time_limit_s, int keep,
                          int jobs = 1);

// a ranks before b: feasible first, then faster (or, both infeasible, less memory).
bool grid_better(const costmodel::CostReport& a, const costmodel::CostReport& b);

}  // namespace autoddl::search
