// `cd-expert`: neighbourhood coordinate descent from the best expert layouts, on their own terms.
// The Megatron-LM grid's fastest points (megatron_grid.hpp) each fix a mesh [pp, dp, tp], a stage
// partition, micro-batches, recompute and the optimizer sharding; cost tables are built for
// exactly that configuration, the expert's per-op signatures are mapped into them, and CD moves
// single ops and neighbourhoods from there (sequence parallelism on some layers only, another
// split of the head or the embedding, ZeRO-3 storage of some weights). Every visited scheme keeps
// the expert's whole-scheme settings (scatter/gather sends, schedule, buckets, tp/p2p overlap) and is judged by
// evaluate(); the expert point itself is a candidate, so the result is never slower than the
// best grid point. This is where pipeline parallelism enters the SBP search at production scale.
#include <chrono>
#include <cstdio>

#include "../expert_start.hpp"
#include "../megatron_grid.hpp"
#include "../parallel.hpp"
#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/search/searcher.hpp"

namespace autoddl::search::methods {

using namespace costmodel;

std::vector<SearchResult> run_cd_expert(SearchContext& ctx, std::string& skip) {
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  const Graph& g = ctx.graph();
  const ClusterSpec& c = ctx.cluster();
  const double limit = ctx.options().time_limit_s;
  int mesh_devices = 1;
  for (int x : ctx.mesh_shape()) mesh_devices *= x;
  if (mesh_devices != c.total_gpus()) {
    skip = "the expert grid uses every GPU of the cluster (" + std::to_string(c.total_gpus()) + "); the mesh has " +
           std::to_string(mesh_devices);
    return {};
  }
  const MegatronGrid& grid = ctx.expert_grid();
  if (grid.best.empty() || !grid.best[0].report.feasible) {
    skip = "no feasible Megatron-LM point to start from";
    return {};
  }
  SearchResult best;
  best.method = "cd-expert";
  best.scheme = grid.best[0].scheme;
  best.report = grid.best[0].report;
  std::string from = grid.best[0].scheme.name.substr(9);
  best.note = "= expert " + from;
  // Each start (tables, mapping, descent, evaluate()) is independent: run in parallel with
  // --jobs, then judged in grid order, as one thread would.
  std::vector<const GridPoint*> from_points;
  for (const GridPoint& p : grid.starts) {
    if (p.report.feasible) from_points.push_back(&p);
  }
  const size_t n = from_points.size();
  std::vector<ExpertStart> runs(n);
  std::vector<char> started(n, 0);
  parallel_for(static_cast<int>(n), ctx.options().jobs, [&](int k) {
    if (elapsed() >= limit) return;
    started[k] = 1;
    runs[k] = descend_from_expert(g, c, *from_points[k], ctx.options(), "cd-expert", limit - elapsed(),
                                  [&](const std::string& line) { ctx.progress(line); });
  });
  nlohmann::json starts = nlohmann::json::array();
  auto judge = [&](Scheme& s, const CostReport& r, const std::string& label) {
    if (grid_better(r, best.report)) {
      best.scheme = std::move(s);
      best.report = r;
      best.note = label;
    }
  };
  for (size_t k = 0; k < n && started[k]; ++k) {
    ExpertStart& run = runs[k];
    if (run.descended) {
      const std::string name = run.row["expert"].get<std::string>();
      run.row["mapped_iteration_s"] = run.mapped_report.iteration_s;
      judge(run.mapped, run.mapped_report, "= expert " + name + " (mapped)");
      run.row["iteration_s"] = run.found_report.iteration_s;
      run.row["feasible"] = run.found_report.feasible;
      judge(run.found, run.found_report, "from expert " + name);
    }
    starts.push_back(std::move(run.row));
  }
  best.search_s = elapsed();  // the grid walk included when this method walked it first
  best.details = {{"starts", starts}, {"grid_points", grid.points}, {"grid_truncated", grid.truncated}};
  return {best};
}

}  // namespace autoddl::search::methods
