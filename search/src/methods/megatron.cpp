// `megatron`: the best point of the Megatron-LM grid (megatron_grid.hpp): tp × pp × dp over every
// GPU of the cluster, micro-batch size, sequence parallelism and recompute, each point priced by
// evaluate().
#include <algorithm>

#include "../megatron_grid.hpp"
#include "autoddl/search/searcher.hpp"

namespace autoddl::search::methods {

std::vector<SearchResult> run_megatron(SearchContext& ctx, std::string& skip) {
  const costmodel::Graph& g = ctx.graph();
  const int devices = ctx.cluster().total_gpus();
  int mesh_devices = 1;
  for (int x : ctx.mesh_shape()) mesh_devices *= x;
  if (mesh_devices != devices) {
    skip = "Megatron-LM uses every GPU of the cluster (" + std::to_string(devices) + "); the mesh has " +
           std::to_string(mesh_devices);
    return {};
  }
  const MegatronGrid& grid = ctx.expert_grid();
  SearchResult best;
  best.method = "megatron";
  best.search_s = grid.seconds;
  if (grid.best.empty()) {
    best.unavailable = "no Megatron-LM configuration exists for " + g.name + " on " + std::to_string(devices) + " GPUs";
    best.report.feasible = false;
    best.report.infeasible_reason = best.unavailable;
    return {best};
  }
  best.scheme = grid.best[0].scheme;
  best.report = grid.best[0].report;
  best.note = best.scheme.name.substr(9);
  best.details = {{"grid_points", grid.points}, {"feasible_points", grid.feasible}, {"truncated", grid.truncated},
                  {"best", best.scheme.name}};
  if (!grid.best_by_experts.empty()) {
    // The best point per expert layout, fastest first: why the grid's ep/etp won.
    std::vector<const std::pair<const std::string, GridPoint>*> rows;
    for (const auto& kv : grid.best_by_experts) rows.push_back(&kv);
    std::sort(rows.begin(), rows.end(), [](auto* a, auto* b) { return grid_better(a->second.report, b->second.report); });
    nlohmann::json by = nlohmann::json::array();
    for (const auto* kv : rows) {
      by.push_back({{"experts", kv->first.empty() ? "replicated" : kv->first},
                    {"scheme", kv->second.scheme.name},
                    {"iteration_s", kv->second.report.iteration_s},
                    {"feasible", kv->second.report.feasible},
                    {"all_to_all_exposed_s", kv->second.report.all_to_all_exposed_s}});
    }
    best.details["by_expert_layout"] = by;
  }
  return {best};
}

}  // namespace autoddl::search::methods
