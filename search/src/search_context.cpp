// The shared state of the table-based methods (see searcher.hpp). configure() picks the tables'
// configuration (micro-batches x recompute) by cost: each candidate descends quickly from the
// expert seeds and is ranked by evaluate(); dominated candidates and counts a memory bound rules
// out are skipped; a fit in the table's estimate that evaluate() still rejects lowers the
// table's capacity by the excess and retries.
// With a pipeline dim, each configuration partitions layers into stages first (pipeline.hpp).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/mesh.hpp"
#include "autoddl/costmodel/timeline.hpp"
#include "autoddl/search/assignment.hpp"
#include "autoddl/search/pipeline.hpp"
#include "autoddl/search/searcher.hpp"
#include "megatron_grid.hpp"
#include "parallel.hpp"

namespace autoddl::search {

using namespace costmodel;

SearchContext::SearchContext(const Graph& g, const ClusterSpec& c, SearchOptions opt)
    : g_(&g), c_(&c), opt_(std::move(opt)) {
  mesh_ = opt_.mesh_shape.empty() ? default_mesh(c).shape() : opt_.mesh_shape;
  make_mesh(c, mesh_, "--mesh");
  if (opt_.pipeline_dim >= static_cast<int>(mesh_.size())) {
    throw InputError("--pipeline-dim", "", "mesh " + std::to_string(mesh_.size()) + "-D has no dim " +
                                               std::to_string(opt_.pipeline_dim));
  }
  if (opt_.pipeline_dim >= 0 && mesh_[opt_.pipeline_dim] < 2) {
    throw InputError("--pipeline-dim", "", "the pipeline dim must have at least 2 devices");
  }
}

SearchContext::~SearchContext() = default;

const MegatronGrid& SearchContext::expert_grid() {
  if (!grid_) {
    progress("walking the Megatron-LM grid");
    const auto t0 = std::chrono::steady_clock::now();
    grid_ = std::make_unique<MegatronGrid>(megatron_grid(*g_, *c_, opt_.time_limit_s, kGridKeep, opt_.jobs));
    grid_->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  return *grid_;
}

void SearchContext::progress(const std::string& line) const {
  // --jobs: descents report from several threads. Recursive: a child context (cd-mesh's, one
  // per mesh) reports through its parent's progress on the same thread.
  static std::recursive_mutex one_line_at_a_time;
  if (!opt_.progress) return;
  std::lock_guard<std::recursive_mutex> lock(one_line_at_a_time);
  opt_.progress(line);
}

const CostTables& SearchContext::tables() {
  if (!tables_ && !pruned_) configure();
  AUTODDL_CHECK(tables_) << "the search context was pruned: it has no tables";
  return *tables_;
}

const Coordinates& SearchContext::coordinates() {
  if (!coords_) coords_ = std::make_unique<Coordinates>(make_coordinates(tables(), opt_.tie_layers));
  return *coords_;
}

const std::vector<Seed>& SearchContext::seeds() {
  tables();
  return seeds_;
}

const nlohmann::json& SearchContext::config() {
  if (!tables_ && !pruned_) configure();
  return config_;
}

void SearchContext::offer(const std::vector<int>& choice, double objective_s) {
  if (incumbent_.empty() || objective_s < incumbent_s_) {
    incumbent_ = choice;
    incumbent_s_ = objective_s;
  }
}

SearchResult SearchContext::result(const std::string& method, const std::vector<int>& choice, double search_s) {
  const CostTables& t = tables();
  SearchResult r;
  r.method = method;
  r.scheme = to_scheme(t, choice, method);
  r.report = evaluate(*g_, *c_, r.scheme);
  r.search_s = search_s;
  r.objective_s = recompute_objective(t, choice).total();
  offer(choice, *r.objective_s);
  return r;
}

namespace {

struct Cfg {
  int m;
  Recompute rc;
  bool shard_optimizer;
  int v = 1;  // chunks per stage (interleaved 1F1B when > 1)
};

struct Attempt {
  Cfg cfg;
  std::unique_ptr<CostTables> tables;
  std::vector<Seed> seeds;
  std::vector<int> choice;
  CostReport report;
  nlohmann::json info;
};

// The configuration probe: plain CD over tied layers (one coordinate per position of identical
// layers) from the expert seeds whose start objective is lowest (not the random ones). It only
// ranks configurations; the methods then descend untied from every seed of the chosen one.
constexpr int kProbeSeeds = 3;

std::vector<int> quick_descent(const CostTables& t, const std::vector<Seed>& seeds) {
  const Coordinates co = make_coordinates(t, true);
  std::vector<std::pair<double, const Seed*>> start;
  for (const Seed& s : seeds) {
    if (s.name.rfind("random", 0) == 0) continue;
    start.emplace_back(Assignment(t, s.choice).objective(), &s);
  }
  std::stable_sort(start.begin(), start.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  if (start.size() > kProbeSeeds) start.resize(kProbeSeeds);
  std::vector<int> best;
  double best_obj = 0;
  for (const auto& [obj0, s] : start) {
    Assignment a(t, s->choice);
    CdOptions opt;
    opt.time_limit_s = 10;
    coordinate_descent(a, co, opt);
    if (best.empty() || a.objective() < best_obj) {
      best = a.choice();
      best_obj = a.objective();
    }
  }
  return best;
}

}  // namespace

double SearchContext::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

void SearchContext::configure() {
  const auto t0 = std::chrono::steady_clock::now();
  const int pd = opt_.pipeline_dim;
  const int stages = pd < 0 ? 1 : mesh_[pd];
  // Micro-batch counts to try: every divisor of the batch that is a power of two; with a
  // pipeline, from one per stage up to 32 per stage (the bubble and the in-flight activations
  // shrink with more; Megatron-LM's best GPT-3 points use 16 per stage).
  std::vector<int> ms;
  for (int64_t m = stages; m <= g_->batch && (stages == 1 || m <= 32 * stages); m *= 2) {
    if (g_->batch % m == 0) ms.push_back(static_cast<int>(m));
  }
  if (ms.empty()) {
    throw InputError("--pipeline-dim", "", "the batch " + std::to_string(g_->batch) + " has no micro-batch count >= " +
                                               std::to_string(stages) + " stages");
  }
  // Chunks per stage: 1F1B, and with enough layers the interleaved schedule at the most chunks
  // (one layer each on average: the smallest bubble), its sends overlapped as Megatron-LM does.
  std::vector<int> vs{1};
  if (stages > 1) {
    int layers = 0;
    layer_of_ops(*g_, layers);
    if (layers / stages > 1) vs.push_back(layers / stages);
  }
  constexpr Recompute kModes[] = {Recompute::none, Recompute::selective, Recompute::full};
  auto options = [&](const Cfg& cfg, double sync_weight) {
    TableOptions o;
    o.mesh_shape = mesh_;
    o.pipeline_dim = pd;
    o.virtual_stages = cfg.v;
    o.overlap_p2p = cfg.v > 1;
    o.micro_batches = cfg.m;
    o.recompute = cfg.rc;
    o.zero_storage = opt_.zero_storage;
    o.shard_optimizer = cfg.shard_optimizer;
    o.sync_weight = sync_weight;
    return o;
  };
  const bool auto_sync = opt_.sync_weight < 0;
  // The stage partition's reference (single-stage tables and their quick descent) does not
  // depend on the chunks per stage: the last one is kept for the next attempt at the same
  // micro-batches, recompute, optimizer sharding and sync weight (the ladder tries 1F1B and the
  // interleaved schedule one after the other).
  struct Reference {
    TableOptions key;
    std::shared_ptr<const CostTables> tables;
    std::vector<int> choice;
  };
  std::mutex reference_mutex;
  Reference last_reference;
  auto same_reference = [](const TableOptions& a, const TableOptions& b) {
    return a.micro_batches == b.micro_batches && a.recompute == b.recompute &&
           a.shard_optimizer == b.shard_optimizer && a.sync_weight == b.sync_weight;
  };
  auto reference_for = [&](const TableOptions& o) {
    {
      std::lock_guard<std::mutex> lock(reference_mutex);
      if (last_reference.tables && same_reference(last_reference.key, o)) return last_reference;
    }
    Reference r{o, std::make_shared<const CostTables>(*g_, *c_, single_stage(o)), {}};
    r.choice = quick_descent(*r.tables, make_seeds(*r.tables, 0, opt_.seed));
    std::lock_guard<std::mutex> lock(reference_mutex);
    last_reference = r;
    return r;
  };
  auto attempt = [&](const Cfg& cfg, double sync_weight) {
    const auto ta = std::chrono::steady_clock::now();
    Attempt a;
    a.cfg = cfg;
    a.info = {{"micro_batches", cfg.m}, {"recompute", std::string(recompute_name(cfg.rc))},
              {"shard_optimizer", cfg.shard_optimizer}, {"sync_weight", sync_weight}};
    if (cfg.v > 1) a.info["virtual_stages"] = cfg.v;
    TableOptions o = options(cfg, sync_weight);
    std::vector<int> reference;
    if (stages > 1) {
      const Reference ref = reference_for(o);
      reference = ref.choice;
      const StagePlan plan = partition_stages(*ref.tables, reference, stages, cfg.v);
      o.op_stage = plan.op_stage;
      if (cfg.v > 1) o.op_chunk = plan.op_chunk;
      a.info["stage_time_s"] = plan.stage_time_s;
      a.info["stage_memory_bytes"] = plan.stage_memory_bytes;
    }
    a.tables = std::make_unique<CostTables>(*g_, *c_, o);
    a.seeds = make_seeds(*a.tables, opt_.random_restarts, opt_.seed);
    if (!reference.empty()) a.seeds.insert(a.seeds.begin(), Seed{"stage-reference", reference});
    a.choice = quick_descent(*a.tables, a.seeds);
    a.report = evaluate(*g_, *c_, to_scheme(*a.tables, a.choice, "probe"));
    // The table fits but evaluate() does not (transient gathers): lower the capacity and retry.
    int retries = 0;
    for (; retries < 3 && !a.report.feasible; ++retries) {
      if (recompute_objective(*a.tables, a.choice).penalty_s > 0) break;  // the table agrees: no fit
      const double excess = a.report.peak_memory_bytes - a.report.memory_capacity_bytes;
      for (int s = 0; s < a.tables->stages(); ++s) {
        a.tables->set_capacity_bytes(s, a.tables->capacity_bytes(s) - 1.05 * excess - 1e6);
      }
      a.choice = quick_descent(*a.tables, a.seeds);
      a.report = evaluate(*g_, *c_, to_scheme(*a.tables, a.choice, "probe"));
    }
    a.info["probe_iteration_s"] = a.report.iteration_s;
    a.info["probe_feasible"] = a.report.feasible;
    a.info["capacity_retries"] = retries;
    a.info["capacity_bytes"] = a.tables->capacity_bytes(0);
    a.info["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - ta).count();
    return a;
  };

  // Every (micro-batches, recompute) is a candidate, ranked by evaluate()'s iteration time, not
  // by first fit. Dominance prunes: at equal micro-batches a lighter recompute that fits beats a
  // heavier one (same work plus less recompute); without a pipeline a configuration that fits
  // also beats itself with more micro-batches (more launches, smaller GEMMs, no bubble to
  // shrink). A configuration that does not fit tells how far its activations must shrink: its
  // recompute mode jumps to the micro-batch count that could fit, or is dropped when even the
  // parameters do not fit.
  std::vector<Attempt> tried;
  nlohmann::json log = nlohmann::json::array();
  int chosen = -1;
  const int big = std::numeric_limits<int>::max();
  int fitted_at[2][3] = {{big, big, big}, {big, big, big}};  // per schedule and mode: the smallest count that fitted
  int next_m[2][3] = {{0, 0, 0}, {0, 0, 0}};  // per schedule and mode: skip counts below this (memory bound)
  // A configuration whose bound (the mesh's stage compute with its recompute mode, times its
  // bubble factor 1 + (S - 1)/(v·m) with a pipeline) cannot beat the iteration to beat (cd-mesh's
  // best so far) is skipped before any table is built.
  int pruned_by_bound = 0;
  for (int m : ms) {
    for (int r = 0; r < 3; ++r) {  // recompute outside the schedule: the two share a reference
      for (int v : vs) {
        if (v > 1 && m % stages) continue;  // interleaving needs whole rounds of micro-batches
        int* fitted = fitted_at[v > 1];
        int* next = next_m[v > 1];
        bool dominated = m < next[r];
        for (int q = 0; q <= r && !dominated; ++q) dominated = stages == 1 ? fitted[q] <= m : fitted[q] == m;
        if (dominated) continue;
        const double bound_s = opt_.stage_compute_bound_s[r] * pipeline_bubble_factor(stages, v, m);
        if (opt_.stage_compute_bound_s[r] > 0 && bound_s >= opt_.beat_iteration_s) {
          ++pruned_by_bound;
          continue;
        }
        const Cfg cfg{m, kModes[r], opt_.shard_optimizer, v};
        progress("configuring tables: " + std::to_string(cfg.m) + " micro-batch(es), recompute " +
                 std::string(recompute_name(cfg.rc)) + (v > 1 ? ", " + std::to_string(v) + " chunks per stage" : ""));
        tried.push_back(attempt(cfg, auto_sync ? 1.0 : opt_.sync_weight));
        log.push_back(tried.back().info);
        const CostReport& rep = tried.back().report;
        if (rep.feasible) {
          fitted[r] = std::min(fitted[r], m);
          if (chosen < 0 || rep.iteration_s < tried[chosen].report.iteration_s) chosen = static_cast<int>(tried.size()) - 1;
          continue;
        }
        const double fixed = rep.peak_memory_bytes - rep.activation_memory_bytes;
        const double room = rep.memory_capacity_bytes - fixed;
        // Activations scale with the micro-batch (1/m; with a pipeline the in-flight count is
        // set by the stages, not by m), the rest does not: the count at which they could fit.
        // Without a pipeline, parameters that do not fit alone rule out every count; with one,
        // another count re-partitions the stages, so only the jump is taken.
        if (room <= 0) {
          if (stages == 1) next[r] = big;
          continue;
        }
        next[r] = std::max(2 * m, static_cast<int>(std::min<double>(big / 2, m * rep.activation_memory_bytes / room)));
        // Round the bound down to a count that exists, so it never skips the first fit.
        int b = 2 * m;
        for (int x : ms) {
          if (x >= 2 * m && x <= next[r]) b = x;
        }
        next[r] = b;
      }
    }
    if (stages == 1 && fitted_at[0][0] <= m) break;  // every later count is dominated
  }
  if (tried.empty()) {  // every configuration pruned by the bound: nothing here can win
    config_ = {{"pruned_by_bound", pruned_by_bound}, {"mesh", mesh_}, {"pipeline_dim", pd}};
    pruned_ = true;
    return;
  }
  if (chosen < 0) {  // nothing fits: the least memory, reported infeasible
    chosen = 0;
    for (size_t i = 1; i < tried.size(); ++i) {
      if (tried[i].report.peak_memory_bytes < tried[chosen].report.peak_memory_bytes) chosen = static_cast<int>(i);
    }
  }
  // cd-mesh: a mesh whose best probe is not within its margin of the best found keeps the probe
  // (no optimizer or sync-weight probes; the caller does not descend).
  const bool probe_only = std::isfinite(opt_.deepen_below_s) &&
                          !(tried[chosen].report.feasible && tried[chosen].report.iteration_s < opt_.deepen_below_s);
  // A sharded optimizer (ZeRO-1) is the least memory, which is why the ladder above uses it, but
  // not free: its parameter all-gather after the step is exposed. Where it was allowed, the
  // chosen configuration is also tried without it (data parallel and owt as the experts run them).
  if (opt_.shard_optimizer && !probe_only) {
    Cfg cfg = tried[chosen].cfg;
    cfg.shard_optimizer = false;
    progress("configuring tables: optimizer state replicated");
    tried.push_back(attempt(cfg, auto_sync ? 1.0 : opt_.sync_weight));
    log.push_back(tried.back().info);
    if (ranks_above(tried.back().report, tried[chosen].report)) chosen = static_cast<int>(tried.size()) - 1;
  }
  // Gradient sync hides behind the backward in evaluate() (bucketed, overlapped), which an
  // additive objective cannot see: probe smaller weights of it and keep the one whose descent
  // evaluate() likes best.
  if (auto_sync && !probe_only) {
    const Cfg cfg = tried[chosen].cfg;  // its shard_optimizer as chosen above
    // The three probes are independent: built in parallel with --jobs, ranked in this order.
    constexpr double kWeights[] = {0.5, 0.25, 0.0};
    progress("configuring tables: gradient-sync weights 0.5, 0.25, 0");
    std::vector<Attempt> probes(3);
    parallel_for(3, opt_.jobs, [&](int i) { probes[i] = attempt(cfg, kWeights[i]); });
    for (Attempt& p : probes) {
      tried.push_back(std::move(p));
      log.push_back(tried.back().info);
      if (ranks_above(tried.back().report, tried[chosen].report)) chosen = static_cast<int>(tried.size()) - 1;
    }
  }
  Attempt& a = tried[chosen];
  tables_ = std::move(a.tables);
  seeds_ = std::move(a.seeds);
  offer(a.choice, recompute_objective(*tables_, a.choice).total());
  config_ = a.info;
  config_["tried"] = log;
  if (probe_only) config_["probe_only"] = true;
  config_["mesh"] = mesh_;
  config_["pipeline_dim"] = pd;
  config_["sync_weight"] = tables_->options().sync_weight;
  config_["zero_storage"] = opt_.zero_storage;
  config_["shard_optimizer"] = tables_->options().shard_optimizer;
  config_["ops"] = tables_->ops();
  config_["op_classes"] = tables_->classes();
  config_["terms"] = tables_->terms();
  if (pruned_by_bound) config_["pruned_by_bound"] = pruned_by_bound;
  config_["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace autoddl::search
