// `autoddl sync build|evaluate|dataset`: data-parallel synchronization strategies (sync/); train,
// eval, search and transfer are in cmd_sync_learn.cpp. `build`
// writes a builder's strategy as strategy JSON (docs/sync-strategy-json.md); `evaluate` prices
// a strategy file, one builder, or every builder (`--builder all`) with the analytical
// evaluator (per PS server and all-reduce group, overlapped with backward).
#include <cstdio>
#include <optional>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/output_files.hpp"
#include "autoddl/sync/analytical.hpp"
#include "autoddl/sync/builders.hpp"
#include "autoddl/sync/dataset.hpp"
#include "autoddl/sync/strategy_json.hpp"
#include "autoddl/sync/training.hpp"
#ifdef AUTODDL_SYNC_HAVE_SIM
#include <chrono>

#include "autoddl/sync/simulated.hpp"
#endif
#include "cli_util.hpp"
#include "cmd_sync_learn.hpp"
#include "commands.hpp"

namespace autoddl::cli {
namespace {

struct SyncOptions {
  std::string model, knobs, cluster, builder, strategy, out, json_file, pairs;
  std::optional<int> nodes;
  bool sim = false, refeature = false;
  uint64_t seed = 1;
  int jobs = 1, per_pair = 420, runs = 1;
};

struct Loaded {
  costmodel::Graph graph;
  costmodel::ClusterSpec cluster;
  std::vector<sync::Variable> vars;
};

Loaded load(const SyncOptions& opt) {
  costmodel::ClusterSpec c = costmodel::resolve_cluster(opt.cluster, opt.nodes);
#ifdef AUTODDL_SYNC_HAVE_SIM
  if (opt.sim) sync::check_sync_sim_cluster(c);  // before the model is built or any strategy priced
#endif
  Loaded l{load_sync_model(opt.model, opt.knobs, c).graph, std::move(c), {}};
  l.vars = sync::extract_variables(l.graph);
  return l;
}

std::string builder_list() {
  std::string s;
  for (const sync::BuilderInfo& b : sync::builders()) s += (s.empty() ? "" : ", ") + std::string(b.name);
  return s;
}

void print_summary(const sync::Strategy& s, const sync::Evaluation& e) {
  int shards = 0, ps = 0, async = 0;
  for (const sync::VarConfig& v : s.vars) {
    shards += v.shards;
    for (const sync::Synchronizer& p : v.parts) {
      ps += p.arch == sync::Arch::ps ? 1 : 0;
      async += p.arch == sync::Arch::ps && (!p.sync || p.staleness > 0) ? 1 : 0;
    }
  }
  std::printf("  %-22s %12s %12s %12s %12s %12s %12s  %zu vars, %d shards (%d PS), %zu servers, %zu groups\n",
              s.id.c_str(), human_seconds(e.iteration_s).c_str(), human_seconds(e.exposed_sync_s).c_str(),
              human_seconds(e.ps_max_s).c_str(), human_seconds(e.ps_sum_s).c_str(),
              human_seconds(e.ar_max_s).c_str(), human_seconds(e.ar_sum_s).c_str(), s.vars.size(), shards, ps,
              e.servers.size(), e.groups.size());
  // The evaluators price a step; asynchronous updates also change what a step achieves.
  if (async > 0)
    std::printf("  %-22s note: %d of %d PS shards asynchronous (sync false or staleness > 0): the step time only, "
                "convergence per step is not modelled\n",
                "", async, ps);
}

void print_header(const Loaded& l) {
  int sparse = 0;
  for (const sync::Variable& v : l.vars) sparse += v.sparse ? 1 : 0;
  std::printf("autoddl sync: %s (%zu variables, %d sparse, %s params) on %s, %d GPUs (%d nodes x %d)\n",
              l.graph.name.c_str(), l.vars.size(), sparse, human_count(static_cast<double>(l.graph.parameter_count())).c_str(),
              l.cluster.name.c_str(), l.cluster.total_gpus(), l.cluster.nodes, l.cluster.gpus_per_node);
  std::printf("  %-22s %12s %12s %12s %12s %12s %12s\n", "strategy", "iteration", "exposed", "PS max", "PS sum",
              "AR max", "AR sum");
}

int run_build(const SyncOptions& opt) {
  Loaded l = load(opt);
  sync::Strategy s = sync::find_builder(opt.builder).build(l.vars, l.cluster);
  sync::validate_strategy(s, l.vars, l.cluster, opt.builder);
  sync::Evaluation e = sync::evaluate_analytical(l.graph, l.vars, s, l.cluster);
  OutputFiles out;
  out.add_json(opt.out, sync::strategy_to_json(s));
  if (!opt.json_file.empty()) {
    out.add_json(opt.json_file, {{"model", l.graph.name}, {"cluster", l.cluster.name},
                                 {"strategy", sync::strategy_to_json(s)}, {"analytical", sync::evaluation_to_json(e)}});
  }
  out.commit();
  print_header(l);
  print_summary(s, e);
  if (!opt.out.empty()) std::printf("strategy written to %s\n", opt.out.c_str());
  return 0;
}

int run_evaluate(const SyncOptions& opt) {
  if (opt.strategy.empty() == opt.builder.empty())
    throw InputError("--strategy", "", "give exactly one of --strategy FILE and --builder NAME|all");
  Loaded l = load(opt);  // checks first that --sim can simulate the cluster
  std::vector<sync::Strategy> strategies;
  if (!opt.strategy.empty()) {
    strategies.push_back(sync::load_strategy_file(opt.strategy, l.vars, l.cluster));
    if (strategies.back().id.empty()) strategies.back().id = opt.strategy;
  } else if (opt.builder == "all") {
    for (const sync::BuilderInfo& b : sync::builders()) strategies.push_back(b.build(l.vars, l.cluster));
  } else {
    strategies.push_back(sync::find_builder(opt.builder).build(l.vars, l.cluster));
  }
  nlohmann::json rows = nlohmann::json::array();
  std::vector<sync::Evaluation> evals;
  std::vector<double> simulated;
  for (const sync::Strategy& s : strategies) {
    evals.push_back(sync::evaluate_analytical(l.graph, l.vars, s, l.cluster));
    nlohmann::json r = sync::evaluation_to_json(evals.back());
    r["strategy"] = s.id;
    if (opt.sim) {
#ifdef AUTODDL_SYNC_HAVE_SIM
      sync::SimSyncOptions so;
      so.seed = opt.seed;
      sync::SimSyncResult sr = sync::simulate_strategy(l.graph, l.vars, s, l.cluster, so);
      simulated.push_back(sr.iteration_s);
      r["simulated"] = {{"seed", opt.seed}, {"iteration_s", sr.iteration_s}, {"compute_s", sr.compute_s},
                        {"exposed_comm_s", sr.exposed_comm_s}, {"transfers", sr.transfers}};
#else
      throw InputError("--sim", "", "this autoddl was built without the simulator (sim/ needs SimGrid)");
#endif
    }
    rows.push_back(std::move(r));
  }
  if (!opt.json_file.empty()) {
    write_json_atomic(opt.json_file,
                      {{"model", l.graph.name}, {"cluster", l.cluster.name}, {"evaluator", "analytical"},
                       {"evaluations", rows}});
  }
  print_header(l);
  for (size_t i = 0; i < strategies.size(); ++i) {
    print_summary(strategies[i], evals[i]);
    if (opt.sim) std::printf("  %-22s %12s  (SimGrid, seed %llu)\n", "", human_seconds(simulated[i]).c_str(),
                             static_cast<unsigned long long>(opt.seed));
  }
  return 0;
}

int run_dataset(const SyncOptions& opt) {
  if (opt.out.empty()) throw InputError("--out", "", "is required");
  if (opt.refeature) {
    const auto start = std::chrono::steady_clock::now();
    int64_t n = sync::refeature_dataset(opt.out, print_note);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("autoddl sync dataset: features of %lld records recomputed in %s/records.jsonl, %.1f s\n",
                static_cast<long long>(n), opt.out.c_str(), s);
    return 0;
  }
#ifdef AUTODDL_SYNC_HAVE_SIM
  sync::DatasetOptions o;
  o.per_pair = opt.per_pair;
  o.runs = opt.runs;
  o.seed = opt.seed;
  o.jobs = opt.jobs;
  o.note = print_note;
  const auto start = std::chrono::steady_clock::now();
  int64_t last_printed = -1;
  auto progress = [&](int64_t done, int64_t total) {
    if (done != total && done - last_printed < 50) return;  // one line per 50 records
    last_printed = done;
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "\rautoddl sync dataset: %lld/%lld records, %.0f s", static_cast<long long>(done),
                 static_cast<long long>(total), s);
    if (done == total) std::fprintf(stderr, "\n");
  };
  std::vector<sync::DatasetPair> pairs;
  for (const sync::DatasetPair& p : sync::default_dataset_pairs()) {
    if (opt.pairs.empty() || sync::pair_matches(p.key(), opt.pairs)) pairs.push_back(p);
  }
  if (pairs.empty()) throw InputError("--pairs", "", "matches none of the 24 pairs (e.g. '*@autosync-a,ncf@*')");
  int64_t written = sync::write_dataset(opt.out, pairs, o, progress);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("autoddl sync dataset: %lld new records (%zu pairs x %d) in %s/records.jsonl, %.1f s, %.0f records/s\n",
              static_cast<long long>(written), pairs.size(), o.per_pair, opt.out.c_str(), s,
              s > 0 ? static_cast<double>(written) / s : 0.0);
  return 0;
#else
  (void)opt;
  throw InputError("sync dataset", "", "this autoddl was built without the simulator (sim/ needs SimGrid)");
#endif
}

}  // namespace

RunFn setup_sync(CLI::App& sub) {
  auto opt = std::make_shared<SyncOptions>();
  sub.require_subcommand(1);
  CLI::App* build = sub.add_subcommand("build", "Build a hand-made strategy (" + builder_list() +
                                                    ") and write it as strategy JSON");
  CLI::App* eval = sub.add_subcommand(
      "evaluate", "Price a strategy file, a builder or every builder (--builder all) analytically");
  for (CLI::App* c : {build, eval}) {
    add_model_options(*c, opt->model, opt->knobs);
    add_cluster_options(*c, opt->cluster, opt->nodes);
    c->add_option("--json", opt->json_file, "Write the strategy's evaluation (and the strategy) as JSON to FILE");
  }
  build->add_option("--builder", opt->builder, "One of: " + builder_list())->required();
  build->add_option("--out", opt->out, "Write the strategy JSON to FILE");
  eval->add_option("--builder", opt->builder, "A builder name, or all");
  eval->add_option("--strategy", opt->strategy, "A strategy JSON file (docs/sync-strategy-json.md)");
  eval->add_flag("--sim", opt->sim, "Also simulate each strategy with SimGrid (incast, contention, jitter)");
  eval->add_option("--seed", opt->seed, "Seed of the simulator's per-run jitter")->capture_default_str()->check(non_negative_integer());
  CLI::App* dataset = sub.add_subcommand(
      "dataset", "Write (model, cluster, strategy, simulated runtime) records as JSONL (resumable)");
  // Not ->required(): CLI11 would then demand it of `sync dataset import` too (run_dataset checks it).
  dataset->add_option("--out", opt->out, "Output directory (records.jsonl, schema.json)");
  dataset->require_subcommand(0, 1);
  dataset->add_option("--jobs", opt->jobs, "Parallel simulations")->capture_default_str();
  dataset->add_option("--per-pair", opt->per_pair, "Records per (model, cluster) pair (24 pairs), at most " +
                                                      std::to_string(sync::kMaxRecordsPerPair))
      ->capture_default_str();
  dataset->add_option("--pairs", opt->pairs,
                      "Only these (model, cluster) pairs: model@cluster patterns, '*' for a side (default: all)");
  dataset->add_option("--runs", opt->runs,
                      "Simulated runs per record; the label is their mean (jitter / sqrt(runs))")
      ->capture_default_str();
  dataset->add_option("--seed", opt->seed, "Seed of the sampler and the simulator's jitter")->capture_default_str()->check(non_negative_integer());
  dataset->add_flag("--refeature", opt->refeature,
                    "Recompute the features of the records already in DIR from their strategies (labels kept; "
                    "for a dataset written by an autoddl with other features); simulates nothing");
  auto learn = setup_sync_learn(sub);
  auto search = setup_sync_search(sub);
  auto autodist = setup_sync_autodist(sub, *dataset);
  return [opt, build, dataset, learn, search, autodist] {
    if (std::optional<int> rc = learn()) return *rc;
    if (std::optional<int> rc = search()) return *rc;
    if (std::optional<int> rc = autodist()) return *rc;
    if (dataset->parsed()) return run_dataset(*opt);
    return build->parsed() ? run_build(*opt) : run_evaluate(*opt);
  };
}

}  // namespace autoddl::cli
