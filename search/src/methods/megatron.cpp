// `megatron`: the best point of the Megatron-LM grid (Narayanan et al., SC'21): tp × pp × dp over
// every GPU of the cluster, micro-batch size, sequence parallelism and recompute (none, then
// selective, then full: recompute only adds time, so the first that fits is kept). Each point is
// costmodel::make_scheme("megatron:...") priced by evaluate(); points Megatron-LM itself refuses
// (heads % tp, layers % pp) are skipped as make_scheme refuses them.
#include <chrono>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/search/searcher.hpp"

namespace autoddl::search::methods {

using namespace costmodel;

std::vector<SearchResult> run_megatron(SearchContext& ctx, std::string& skip) {
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  const Graph& g = ctx.graph();
  const ClusterSpec& c = ctx.cluster();
  const int devices = c.total_gpus();
  int mesh_devices = 1;
  for (int x : ctx.mesh_shape()) mesh_devices *= x;
  if (mesh_devices != devices) {
    skip = "Megatron-LM uses every GPU of the cluster (" + std::to_string(devices) + "); the mesh has " +
           std::to_string(mesh_devices);
    return {};
  }
  SearchResult best;
  bool have = false;
  int points = 0, feasible = 0;
  bool truncated = false;
  for (int tp = 1; tp <= devices && !truncated; ++tp) {
    if (devices % tp) continue;
    for (int pp = 1; pp <= devices / tp && !truncated; ++pp) {
      if ((devices / tp) % pp) continue;
      const int dp = devices / tp / pp;
      if (g.batch % dp) continue;
      const int64_t per_replica = g.batch / dp;
      for (int64_t mb = 1; mb <= per_replica && !truncated; mb *= 2) {
        if (per_replica % mb) continue;
        for (int sp = 0; sp <= (tp > 1 ? 1 : 0); ++sp) {
          for (const char* rc : {"none", "selective", "full"}) {
            if (elapsed() > ctx.options().time_limit_s) {
              truncated = true;
              break;
            }
            const std::string spec = "megatron:tp=" + std::to_string(tp) + ",pp=" + std::to_string(pp) +
                                     ",dp=" + std::to_string(dp) + ",mb=" + std::to_string(mb) +
                                     ",sp=" + std::to_string(sp) + ",recompute=" + rc;
            Scheme s;
            try {
              s = make_scheme(spec, g, c, {});
            } catch (const InputError&) {
              break;  // this (tp, pp, dp, mb) does not exist for the model
            }
            ++points;
            const CostReport r = evaluate(g, c, s);
            feasible += r.feasible;
            const bool better = !have || (r.feasible && !best.report.feasible) ||
                                (r.feasible == best.report.feasible &&
                                 (r.feasible ? r.iteration_s < best.report.iteration_s
                                             : r.peak_memory_bytes < best.report.peak_memory_bytes));
            if (better) {
              best.scheme = std::move(s);
              best.report = r;
              have = true;
            }
            if (r.feasible) break;  // fits: more recompute only costs time
          }
        }
      }
    }
  }
  if (!have) {
    best.method = "megatron";
    best.unavailable = "no Megatron-LM configuration exists for " + g.name + " on " + std::to_string(devices) + " GPUs";
    best.report.feasible = false;
    best.report.infeasible_reason = best.unavailable;
    best.search_s = elapsed();
    return {best};
  }
  best.method = "megatron";
  best.search_s = elapsed();
  best.note = best.scheme.name.substr(9);
  best.details = {{"grid_points", points}, {"feasible_points", feasible}, {"truncated", truncated},
                  {"best", best.scheme.name}};
  return {best};
}

}  // namespace autoddl::search::methods
