// The low-shot search over a scheme's data-parallel gradient sync (scheme_sync_search.hpp).
#ifdef AUTODDL_SYNC_HAVE_SIM
#include "autoddl/sync/scheme_sync_search.hpp"

namespace autoddl::sync {

SchemeSyncSearch search_scheme_sync(const costmodel::Graph& g, const costmodel::CostReport& r,
                                    const DataParallelSync& dp, const LowShotOptions& options,
                                    const std::function<void(const std::string&)>& progress) {
  SchemeSyncSearch out;
  out.lowshot = low_shot_search(g, dp.vars, dp.cluster, options, progress);
  out.ddp_iteration_s = r.iteration_s;
  out.best = {"ddp", true, dp.ddp, r.iteration_s, 0};
  for (const LowShotFinal& f : out.lowshot.finals) {
    const Strategy& s = out.lowshot.runs[static_cast<size_t>(f.run)].strategy;
    out.finalists.push_back({f.name, false, s, cost_with_strategy(r, dp, s).iteration_s, f.mean_s});
    if (out.finalists.back().iteration_s < out.best.iteration_s) out.best = out.finalists.back();
  }
  out.best.strategy.id = out.best.name;
  return out;
}

}  // namespace autoddl::sync
#endif  // AUTODDL_SYNC_HAVE_SIM
