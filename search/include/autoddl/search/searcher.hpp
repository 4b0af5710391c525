// The search front end: options in, ranked schemes out. Each method is one file in
// search/src/methods/ and one row of the registry (registry.cpp), like google/benchmark's
// registered functions; baselines are methods too. Methods that search the cost tables share one
// SearchContext, so CD, neighbourhood CD, the ILP and the DP price the same objective, and the
// ILP's bound measures how far each of them is from the optimum.
#pragma once
#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/cost_report.hpp"
#include "autoddl/costmodel/graph.hpp"
#include "autoddl/costmodel/scheme.hpp"
#include "autoddl/search/coordinate_descent.hpp"
#include "autoddl/search/cost_tables.hpp"
#include "autoddl/search/scheme_map.hpp"

namespace autoddl::search {

struct SearchOptions {
  std::vector<int> mesh_shape;  // whole mesh; empty = the cluster's default [nodes, gpus]
  int pipeline_dim = -1;        // a mesh dim whose index is the pipeline stage; -1 = none
  double time_limit_s = 60;     // per method (CD stops, the ILP reports its best bound)
  uint64_t seed = 1;            // random restarts use seed, seed+1, ...
  int random_restarts = 2;
  bool tie_layers = false;      // identical layers take identical choices
  bool zero_storage = true;     // offer ZeRO-3 parameter storage per op
  bool shard_optimizer = true;  // may searched schemes shard the optimizer state (ZeRO-1)? configure() tries both
  // Weight of gradient sync in the table objective (TableOptions); < 0 = probe 1, 0.5, 0.25, 0
  // and keep the weight whose quick descent evaluate() rates fastest.
  double sync_weight = -1;
  // cd / cd-nbh end by descending again from their answer under the sync weight at which the
  // tables' objective equals evaluate()'s iteration there (search/src/reconcile.hpp), so the
  // search minimizes the number it reports. Off: the answer of the configured objective alone.
  bool reconcile_objective = true;
  // Threads for the independent work: the gradient-sync probes, the descents from each seed and
  // cd-expert's starts. Results are combined in a fixed order, so they do not depend on it.
  int jobs = 1;
  // cd-mesh's pruning inside a mesh: a configuration (m micro-batches, v chunks, recompute r)
  // whose bound stage_compute_bound_s[r] · (1 + (S − 1)/(v·m)) is no lower than
  // beat_iteration_s is skipped (S = 1 without a pipeline: no bubble); when every one is, the
  // context is pruned() and has no tables. Indexed none, selective, full; 0 = no bound.
  std::array<double, 3> stage_compute_bound_s{};
  double beat_iteration_s = std::numeric_limits<double>::infinity();
  // cd-mesh's depth: when no configuration's probe is feasible and faster than this, configure()
  // stops after the micro-batch/recompute ladder (no optimizer or sync-weight probes) and
  // config()["probe_only"] is true: the caller keeps the probe (incumbent()) without descending.
  double deepen_below_s = std::numeric_limits<double>::infinity();
  // One-line status for long searches ("cd-nbh: seed megatron 3/9, 12.3 ms").
  std::function<void(const std::string&)> progress;
};

struct MegatronGrid;  // the Megatron-LM grid walk (search/src/megatron_grid.hpp)

struct SearchResult {
  std::string method;
  // Non-empty when the method cannot build a scheme for this model and mesh (data parallel with
  // fewer samples than GPUs): then there is no scheme, and report.feasible is false with this
  // reason. Infeasible is a result, not an error.
  std::string unavailable;
  costmodel::Scheme scheme;
  costmodel::CostReport report;  // costmodel::evaluate(scheme): the authoritative numbers
  double search_s = 0;
  std::optional<double> objective_s;  // table objective, when the scheme is in the shared tables
  // The lowest table objective the method reached: its answer to the problem the ILP solves
  // exactly, so the objective gap is measured on it. The scheme returned is the one evaluate()
  // rates fastest among those visited, whose objective can be higher (the objective is an
  // additive surrogate that cannot see overlap).
  std::optional<double> best_objective_s;
  // cd / cd-nbh: the objective their last phase minimized, at the returned scheme: the tables at
  // the reconciled sync weight, equal to report.iteration_s unless details["reconciled"]["gap"]
  // says why not (search/src/reconcile.hpp).
  std::optional<double> reconciled_objective_s;
  std::optional<double> bound_s;      // the ILP's lower bound on the table objective
  bool optimal = false;               // proven optimal for the table objective
  std::string note;
  nlohmann::json details = nlohmann::json::object();
};

// What the table-based methods share: the graph, the options, the mesh, and (built on first
// use) the cost tables with a configuration (micro-batches, recompute, memory cap, pipeline
// stages) under which searched schemes fit memory, plus the seeds and the best assignment yet.
class SearchContext {
 public:
  SearchContext(const costmodel::Graph& g, const costmodel::ClusterSpec& c, SearchOptions opt);
  SearchContext(costmodel::Graph&&, const costmodel::ClusterSpec&, SearchOptions) = delete;
  ~SearchContext();
  const costmodel::Graph& graph() const { return *g_; }
  const costmodel::ClusterSpec& cluster() const { return *c_; }
  const SearchOptions& options() const { return opt_; }
  const std::vector<int>& mesh_shape() const { return mesh_; }

  const CostTables& tables();
  const Coordinates& coordinates();
  const std::vector<Seed>& seeds();
  // How the tables' configuration was chosen (for the report).
  const nlohmann::json& config();
  // Every configuration was pruned by options().beat_iteration_s: no tables, config() says so.
  bool pruned() {
    config();
    return pruned_;
  }

  // Methods offer every assignment they finish with; the best one warm-starts the ILP.
  void offer(const std::vector<int>& choice, double objective_s);
  const std::vector<int>* incumbent() const { return incumbent_.empty() ? nullptr : &incumbent_; }

  // The Megatron-LM grid's best points, walked once per context under options().time_limit_s:
  // the `megatron` baseline reports the first, `cd-expert` descends from them.
  const MegatronGrid& expert_grid();

  // A finished result for a choice vector of the shared tables: scheme, evaluate(), objective.
  SearchResult result(const std::string& method, const std::vector<int>& choice, double search_s);
  // Reports progress through options().progress.
  void progress(const std::string& line) const;
  // Seconds since the context was made: how long the search (its methods so far) has run.
  double seconds() const;

 private:
  void configure();

  const costmodel::Graph* g_;
  const costmodel::ClusterSpec* c_;
  SearchOptions opt_;
  std::vector<int> mesh_;
  std::unique_ptr<CostTables> tables_;
  std::unique_ptr<Coordinates> coords_;
  std::vector<Seed> seeds_;
  nlohmann::json config_;
  std::vector<int> incumbent_;
  double incumbent_s_ = 0;
  std::unique_ptr<MegatronGrid> grid_;
  bool pruned_ = false;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

struct Searcher {
  std::string_view name;
  std::string_view help;
  bool baseline = false;
  // Returns its result(s); an empty vector with `skip_reason` set when it does not apply.
  std::vector<SearchResult> (*run)(SearchContext& ctx, std::string& skip_reason);
};

// The registry, in the order `--method all` runs them (table methods first, then baselines).
const std::vector<Searcher>& searchers();
const Searcher* find_searcher(std::string_view name);

struct SearchRun {
  std::vector<SearchResult> results;  // ranked: feasible first, then by iteration time, unavailable last
  std::vector<std::pair<std::string, std::string>> skipped;  // method, reason
  nlohmann::json config;
  std::optional<double> ilp_bound_s;
};

// What `autoddl search` runs without --method: cd, cd-nbh, cd-expert and every baseline.
std::vector<std::string> default_methods();

// Runs the methods (names from the registry; "baselines" = every baseline, "all" = every
// method), fills each table result's bound from the ILP when it ran, and ranks. Throws
// InputError("--method", ...) for an unknown name.
SearchRun run_search(const costmodel::Graph& g, const costmodel::ClusterSpec& c, const SearchOptions& opt,
                     const std::vector<std::string>& methods);

}  // namespace autoddl::search
