// `autoddl sync search`: parses, calls sync::low_shot_search (lowshot.hpp), prints the best
// found against every builder (means of the same repeated simulator runs) and writes the best
// strategy and a JSON report; progress lines go to stderr. Two comparisons (issue 32): with the
// same options (every builder, fp16-compressed ones included, as the search may compress) and
// with compression off (the best uncompressed found vs the best uncompressed builder); rows
// that compress are marked lossy.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/output_files.hpp"
#include "autoddl/sync/strategy_compact.hpp"
#include "autoddl/sync/strategy_json.hpp"
#ifdef AUTODDL_SYNC_HAVE_SIM
#include "autoddl/sync/lowshot.hpp"
#include "autoddl/sync/simulated.hpp"
#endif
#include "cli_util.hpp"
#include "cmd_sync_learn.hpp"

namespace autoddl::cli {
namespace {

struct SearchOptions {
  std::string model, knobs, cluster, out, json_file;
  std::optional<int> nodes;
#ifdef AUTODDL_SYNC_HAVE_SIM
  sync::LowShotOptions lowshot;
#endif
};

int run_search(const SearchOptions& opt) {
#ifdef AUTODDL_SYNC_HAVE_SIM
  costmodel::ClusterSpec c = costmodel::resolve_cluster(opt.cluster, opt.nodes);
  sync::check_sync_sim_cluster(c);  // before the model is built (low_shot_search checks it too)
  const SyncModel model = load_sync_model(opt.model, opt.knobs, c);
  const costmodel::Graph& g = model.graph;
  std::vector<sync::Variable> vars = sync::extract_variables(g);
  const sync::LowShotOptions& o = opt.lowshot;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  sync::LowShotResult r = sync::low_shot_search(g, vars, c, o, [&](const std::string& line) {
    std::fprintf(stderr, "autoddl sync search: [%5.1f s] %s\n", elapsed(), line.c_str());
  });
  const double wall_s = elapsed();
  const sync::LowShotFinal& best = r.finals.front();
  const sync::LowShotRun& best_run = r.runs[static_cast<size_t>(best.run)];

  nlohmann::json builders = nlohmann::json::array(), runs = nlohmann::json::array(), finals = nlohmann::json::array();
  for (const sync::LowShotFinal& f : r.finals) {
    finals.push_back({{"name", f.name}, {"mean_s", f.mean_s}, {"builder", f.builder}, {"lossy", f.compressed}});
    if (f.builder)
      builders.push_back({{"builder", f.name}, {"mean_s", f.mean_s}, {"speedup_of_best", f.mean_s / r.best_s},
                          {"lossy", f.compressed}});
  }
  // Compression off: the fastest uncompressed final against the fastest uncompressed builder
  // (null where none ran, e.g. every final compresses).
  const sync::LowShotFinal* plain = r.best_plain < 0 ? nullptr : &r.finals[static_cast<size_t>(r.best_plain)];
  const bool plain_ok = plain != nullptr && !r.best_plain_builder.empty();
  nlohmann::json compression_off = nullptr;
  if (plain_ok)
    compression_off = {{"best", {{"name", plain->name}, {"mean_s", plain->mean_s}, {"builder", plain->builder}}},
                       {"best_builder", {{"builder", r.best_plain_builder}, {"mean_s", r.best_plain_builder_s}}},
                       {"speedup_over_best_builder", r.best_plain_builder_s / plain->mean_s}};
  // Every run's strategy (issue 32 item 5) in the compact form (strategy_compact.hpp), once per
  // distinct strategy; runs and finals name theirs by index. `sync export --strategy REPORT
  // --run N` takes one away.
  nlohmann::json variables = nlohmann::json::array(), strategy_list = nlohmann::json::array();
  for (const sync::Variable& v : vars) variables.push_back(v.name);
  std::map<std::string, size_t> strategy_index;
  std::vector<size_t> run_strategy;
  for (const sync::LowShotRun& run : r.runs) {
    nlohmann::json compact = sync::strategy_to_compact(run.strategy, vars);
    const auto [at, added] = strategy_index.emplace(compact.dump(), strategy_list.size());
    if (added) strategy_list.push_back(std::move(compact));
    run_strategy.push_back(at->second);
  }
  for (size_t i = 0; i < r.runs.size(); ++i) {
    const sync::LowShotRun& run = r.runs[i];
    runs.push_back({{"source", run.source}, {"round", run.round}, {"analytical_s", run.analytical_s},
                    {"runtime_s", run.runtime_s}, {"score", run.score}, {"strategy", run_strategy[i]}});
  }
  for (size_t i = 0; i < r.finals.size(); ++i) finals[i]["run"] = r.finals[i].run;
  // Per round (issue 32 item 4): what ranked the candidates and how well the scores ordered
  // the picks (null where nothing scored them or no pair differs).
  nlohmann::json round_stats = nlohmann::json::array();
  auto or_null = [](double v) { return v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v); };
  for (const sync::LowShotRound& st : r.round_stats)
    round_stats.push_back({{"round", st.round}, {"ranked_by", st.ranked_by}, {"scored_by", st.scored_by},
                           {"candidates", st.candidates}, {"picked", st.picked}, {"accuracy", or_null(st.accuracy)},
                           {"pairs", st.pairs}, {"round_best_s", st.round_best_s},
                           {"best_so_far_s", st.best_so_far_s}});
  sync::Strategy best_strategy = r.best;
  best_strategy.id = best.name;
  nlohmann::json report = {
      {"model", g.name}, {"knobs", model.knobs}, {"cluster", c.name}, {"gpus", c.total_gpus()}, {"trials", o.trials}, {"seed", o.seed},
      {"arm", o.arm}, {"ranker", o.ranker}, {"pretrained", o.pretrained}, {"transfer", o.transfer}, {"per_round", o.per_round}, {"explore", o.explore},
      {"repeats", o.repeats}, {"neighbours", o.mutate}, {"rounds", r.rounds}, {"simulated_runs", r.runs.size()},
      {"best", {{"name", best.name}, {"mean_s", r.best_s}, {"builder", best.builder}, {"lossy", best.compressed},
                {"strategy", sync::strategy_to_json(best_strategy)}}},
      // Same options: every builder, the fp16-compressed ones included, as the search may compress.
      {"best_builder", {{"builder", r.best_builder}, {"mean_s", r.best_builder_s}}},
      {"speedup_over_best_builder", r.best_builder_s / r.best_s},
      {"compression_off", compression_off},
      {"ranker_accuracy_on_picks", or_null(r.ranker_accuracy_on_picks)},
      {"round_stats", round_stats},
      {"builders", builders}, {"finals", finals}, {"runs", runs},
      {"strategies", {{"format", sync::kCompactStrategiesFormat}, {"variables", variables}, {"list", strategy_list}}},
      // Per sampled trial: the best mean the search would report had it stopped there (no
      // selection bias: every point is a mean of the same repeated runs the builders get).
      {"trial_curve_s", r.trial_curve_s}, {"wall_s", wall_s}};
  OutputFiles out;
  out.add_json(opt.out, sync::strategy_to_json(best_strategy));
  out.add_json(opt.json_file, report);
  out.commit();

  const std::string picked_by = o.arm == "ranker" ? o.ranker + " ranker"
                                : o.arm == "random" ? "random picks" : "analytical ranking only";
  std::printf("autoddl sync search: %s on %s (%d GPUs): %d trials + %d builders on the simulator, %s, "
              "seed %llu, %d rounds, %.1f s\n",
              g.name.c_str(), c.name.c_str(), c.total_gpus(), static_cast<int>(r.runs.size()) - r.builders,
              r.builders, picked_by.c_str(), static_cast<unsigned long long>(o.seed), r.rounds, wall_s);
  std::printf("  %-30s %14s %12s   (mean of %d simulated runs, same seeds)\n", "strategy", "iteration", "best is",
              o.repeats);
  auto lossy = [](const sync::LowShotFinal& f) { return f.compressed ? "  fp16, lossy" : ""; };
  std::printf("  %-30s %14s %12s%s\n", ("best: " + best.name).c_str(), human_seconds(r.best_s).c_str(), "", lossy(best));
  if (plain != nullptr && plain != &best && !plain->builder) {  // a builder has its own row
    std::printf("  %-30s %14s %11.2fx\n", ("best uncompressed: " + plain->name).c_str(),
                human_seconds(plain->mean_s).c_str(), plain->mean_s / r.best_s);
  }
  for (const sync::LowShotFinal& f : r.finals) {
    if (!f.builder) continue;
    std::printf("  %-30s %14s %11.2fx%s\n", f.name.c_str(), human_seconds(f.mean_s).c_str(), f.mean_s / r.best_s,
                lossy(f));
  }
  std::printf("best found vs best builder, same options (%s): %.2fx; best found's single run %s (analytical %s)\n",
              r.best_builder.c_str(), r.best_builder_s / r.best_s, human_seconds(best_run.runtime_s).c_str(),
              human_seconds(best_run.analytical_s).c_str());
  if (plain_ok) {
    std::printf("compression off: best found %s vs best builder (%s): %.2fx\n", plain->name.c_str(),
                r.best_plain_builder.c_str(), r.best_plain_builder_s / plain->mean_s);
  }
  if (std::any_of(r.finals.begin(), r.finals.end(), [](const sync::LowShotFinal& f) { return f.compressed; })) {
    std::printf("fp16 compression is lossy: it halves the gradients' bytes (casts charged) but rounds them, "
                "which can change convergence\n");
  }
  if (r.ranker_accuracy_on_picks >= 0)
    std::printf("%s accuracy on its picks (pairs within each round, scored before they ran): %.3f\n",
                o.ranker.c_str(), r.ranker_accuracy_on_picks);
  if (!opt.out.empty()) std::printf("strategy written to %s\n", opt.out.c_str());
  return 0;
#else
  (void)opt;
  throw InputError("sync search", "", "this autoddl was built without the simulator (sim/ needs SimGrid)");
#endif
}

}  // namespace

std::function<std::optional<int>()> setup_sync_search(CLI::App& sub) {
  auto opt = std::make_shared<SearchOptions>();
  CLI::App* search = sub.add_subcommand(
      "search", "AutoSync's low-shot search: sample, rank, run the top few on the simulator, retrain; vs every builder");
  add_model_options(*search, opt->model, opt->knobs);
  add_cluster_options(*search, opt->cluster, opt->nodes);
  search->add_option("--out", opt->out, "Write the best strategy JSON to FILE");
  search->add_option("--json", opt->json_file, "Write the report (best, builders, every run) as JSON to FILE");
#ifdef AUTODDL_SYNC_HAVE_SIM
  sync::LowShotOptions& o = opt->lowshot;
  search->add_option("--trials", o.trials, "Sampled strategies run on the simulator")->capture_default_str();
  search->add_option("--seed", o.seed, "Seed of the sampler and the simulator's jitter")
      ->capture_default_str()
      ->check(non_negative_integer());
  search->add_option("--ranker", o.ranker, "linear or xgboost")->capture_default_str();
  search->add_option("--arm", o.arm,
                     "What picks each round's runs: ranker (AutoSync's loop), random (uniform from the same "
                     "candidates) or analytical (the analytical evaluator every round, nothing learned)")
      ->capture_default_str();
  search->add_option("--pretrained", o.pretrained, "A model file from autoddl sync train (ranks round 1)");
  search->add_option("--transfer", o.transfer,
                     "With --pretrained, later rounds: ensemble (a fresh ranker's scores added to the pretrained "
                     "model's) or finetune (the pretrained model trained further on the runs so far)")
      ->capture_default_str();
  search->add_option("--per-round", o.per_round, "Strategies run per round (the top of the ranking)")
      ->capture_default_str();
  search->add_option("--explore", o.explore, "Candidates sampled and ranked per round")->capture_default_str();
  search->add_option("--repeats", o.repeats, "Runs per finalist in the final comparison")->capture_default_str();
  search->add_flag("--sampler-only", [&o](int64_t) { o.mutate = false; },
                   "Candidates from AutoSync's sampler only (no neighbours of the fastest runs)");
  search->add_option("--jobs", o.jobs, "Parallel simulations (results do not depend on it)")
      ->capture_default_str()
      ->check(integer_at_least(1));
#endif
  return [opt, search]() -> std::optional<int> {
    if (search->parsed()) return run_search(*opt);
    return std::nullopt;
  };
}

}  // namespace autoddl::cli
