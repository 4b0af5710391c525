// `autoddl search --sync`: after the SBP search, AutoSync's low-shot search (lowshot.hpp) over
// the best scheme's data-parallel gradient sync (scheme_sync.hpp), built only with sim/.
// The low-shot loop runs on the group's problem (its variables per replica, the group as a
// cluster); its compute is the model's over the group's ranks, which is the scheme's compute
// for a data-parallel scheme and more than it when other dims split the ops too (or, with a
// pipeline, when each stage computes only its own ops and syncs only its own variables). Its finalists
// (every builder and the best sampled strategies) are then priced in the scheme with
// cost_with_strategy (per stage), and the fastest is kept only if it beats the cost model's DDP iteration:
// the result is never slower than DDP.
#pragma once
#include <functional>
#include <string>

#include "autoddl/sync/lowshot.hpp"
#include "autoddl/sync/scheme_sync.hpp"

namespace autoddl::sync {

struct SchemeSyncChoice {
  std::string name;        // a finalist's name (builder, "sampled-N"), or "ddp" when none beat it
  bool ddp = false;        // nothing beat the scheme's own DDP buckets
  Strategy strategy;       // dp.ddp when ddp
  double iteration_s = 0;  // the scheme's iteration with it (cost model + analytical sync)
  double simulated_s = 0;  // its mean in the low-shot search's final runs (0 for ddp)
};

struct SchemeSyncSearch {
  LowShotResult lowshot;
  double ddp_iteration_s = 0;  // the cost model's, with DDP buckets
  std::vector<SchemeSyncChoice> finalists;  // the low-shot finals priced in the scheme, in its order
  SchemeSyncChoice best;
};

SchemeSyncSearch search_scheme_sync(const costmodel::Graph& g, const costmodel::CostReport& r,
                                    const DataParallelSync& dp, const LowShotOptions& options,
                                    const std::function<void(const std::string&)>& progress = {});

}  // namespace autoddl::sync
