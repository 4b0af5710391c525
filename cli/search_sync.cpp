// `autoddl search --sync [N]` (search_sync.hpp): re-evaluates the best scheme with its plan,
// runs the low-shot sync search on its data-parallel group and prints DDP vs the best found,
// then the best found vs the best builder (same options) and the same with compression off.
#ifdef AUTODDL_HAVE_SEARCH
#include "search_sync.hpp"

#include <unistd.h>

#include <cstdio>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/error.hpp"
#include "cli_util.hpp"
#ifdef AUTODDL_SYNC_HAVE_SIM
#include "autoddl/sync/compression.hpp"
#include "autoddl/sync/scheme_sync_search.hpp"
#include "autoddl/sync/strategy_json.hpp"
#endif

namespace autoddl::cli {

nlohmann::json search_best_sync(const costmodel::Graph& g, const costmodel::ClusterSpec& c,
                                const search::SearchResult& best, int trials, uint64_t seed) {
  auto skipped = [&](const std::string& why) {
    std::printf("sync: skipped: %s\n", why.c_str());
    return nlohmann::json{{"trials", trials}, {"skipped", why}};
  };
#ifdef AUTODDL_SYNC_HAVE_SIM
  costmodel::IterationPlan plan;
  const costmodel::CostReport r = costmodel::evaluate(g, c, best.scheme, &plan);
  sync::DataParallelSync dp;
  try {
    dp = sync::data_parallel_sync(g, c, best.scheme, plan);
  } catch (const InputError& e) {
    return skipped(e.reason());
  }
  if (dp.ranks == 1) return skipped("the best scheme has one data-parallel replica (no gradient sync)");
  sync::LowShotOptions lo;
  lo.trials = trials;
  lo.seed = seed;
  const bool tty = isatty(fileno(stderr));
  const sync::SchemeSyncSearch ss = sync::search_scheme_sync(g, r, dp, lo, [&](const std::string& line) {
    if (tty) std::fprintf(stderr, "autoddl search --sync: %s\n", line.c_str());
  });
  std::printf("\nsync: AutoSync low-shot search over %s's data-parallel gradient sync (%d ranks on %d node%s, %d per "
              "node): %d trials + %d builders on the simulator, seed %llu\n",
              best.method.c_str(), dp.ranks, dp.nodes, dp.nodes == 1 ? "" : "s", dp.ranks_per_node,
              static_cast<int>(ss.lowshot.runs.size()) - ss.lowshot.builders, ss.lowshot.builders,
              static_cast<unsigned long long>(seed));
  std::printf("  %-28s %12s per iteration (cost model)\n", "DDP buckets", human_seconds(ss.ddp_iteration_s).c_str());
  if (ss.best.ddp) {
    std::printf("  %-28s %12s per iteration: no strategy found beats DDP, keeping it\n", "best strategy: DDP buckets",
                human_seconds(ss.best.iteration_s).c_str());
  } else {
    std::printf("  %-28s %12s per iteration, %.2fx over DDP (simulated in the low-shot search: %s)\n",
                ("best strategy: " + ss.best.name).c_str(), human_seconds(ss.best.iteration_s).c_str(),
                ss.ddp_iteration_s / ss.best.iteration_s, human_seconds(ss.best.simulated_s).c_str());
  }
  // Issue 32: against the best builder with the same options (fp16 builders included), and with
  // compression off on both sides. The scheme's own DDP buckets count as an uncompressed builder;
  // finalists[i] is lowshot.finals[i] priced in the scheme.
  const sync::SchemeSyncChoice ddp{"DDP buckets", true, {}, ss.ddp_iteration_s, 0};
  const sync::SchemeSyncChoice *best_builder = &ddp, *plain = &ddp, *plain_builder = &ddp;
  auto faster = [](const sync::SchemeSyncChoice* a, const sync::SchemeSyncChoice& b) {
    return b.iteration_s < a->iteration_s ? &b : a;
  };
  for (size_t i = 0; i < ss.finalists.size(); ++i) {
    const sync::LowShotFinal& lf = ss.lowshot.finals[i];
    if (lf.builder) best_builder = faster(best_builder, ss.finalists[i]);
    if (lf.compressed) continue;
    plain = faster(plain, ss.finalists[i]);
    if (lf.builder) plain_builder = faster(plain_builder, ss.finalists[i]);
  }
  const bool best_lossy = !ss.best.ddp && sync::uses_compression(ss.best.strategy, dp.vars);
  std::printf("  same options: best strategy %.2fx over the best builder (%s, %s)%s\n",
              best_builder->iteration_s / ss.best.iteration_s, best_builder->name.c_str(),
              human_seconds(best_builder->iteration_s).c_str(),
              best_lossy ? "; best strategy uses fp16 compression (lossy: can change convergence)" : "");
  std::printf("  compression off: best %s (%s) %.2fx over the best builder (%s)\n", plain->name.c_str(),
              human_seconds(plain->iteration_s).c_str(), plain_builder->iteration_s / plain->iteration_s,
              plain_builder->name.c_str());
  nlohmann::json finalists = nlohmann::json::array();
  for (size_t i = 0; i < ss.finalists.size(); ++i) {
    const sync::SchemeSyncChoice& f = ss.finalists[i];
    finalists.push_back({{"name", f.name}, {"iteration_s", f.iteration_s}, {"simulated_s", f.simulated_s},
                         {"builder", ss.lowshot.finals[i].builder}, {"lossy", ss.lowshot.finals[i].compressed}});
  }
  return {{"trials", trials},
          {"seed", seed},
          {"group", {{"mesh_dims", dp.dims}, {"ranks", dp.ranks}, {"nodes", dp.nodes},
                     {"ranks_per_node", dp.ranks_per_node}, {"groups_per_node", dp.groups_per_node}}},
          {"ddp_iteration_s", ss.ddp_iteration_s},
          {"best", {{"name", ss.best.name}, {"ddp", ss.best.ddp}, {"iteration_s", ss.best.iteration_s},
                    {"simulated_s", ss.best.simulated_s}, {"lossy", best_lossy},
                    {"strategy", sync::strategy_to_json(ss.best.strategy)}}},
          {"speedup_over_ddp", ss.ddp_iteration_s / ss.best.iteration_s},
          {"best_builder", {{"name", best_builder->name}, {"iteration_s", best_builder->iteration_s}}},
          {"speedup_over_best_builder", best_builder->iteration_s / ss.best.iteration_s},
          {"compression_off", {{"best", {{"name", plain->name}, {"iteration_s", plain->iteration_s}}},
                               {"best_builder", {{"name", plain_builder->name},
                                                 {"iteration_s", plain_builder->iteration_s}}},
                               {"speedup_over_best_builder", plain_builder->iteration_s / plain->iteration_s}}},
          {"finalists", finalists}};
#else
  (void)g, (void)c, (void)best, (void)seed;
  return skipped("this autoddl was built without the simulator (sim/ needs SimGrid)");
#endif
}

}  // namespace autoddl::cli
#endif  // AUTODDL_HAVE_SEARCH
