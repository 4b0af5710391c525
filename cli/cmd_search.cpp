// `autoddl search`: find a fast scheme for a model on a cluster (search/ methods: coordinate
// descent, neighbourhood CD, exact ILP and DP, baselines), print them ranked by the cost model's
// iteration time, explain the winner per layer, and write it as a scheme JSON that
// `autoddl cost --scheme FILE` re-costs to the same time. `--sync [N]` then runs AutoSync's
// low-shot search over the winner's data-parallel gradient sync (cli/search_sync.cpp).
#ifdef AUTODDL_HAVE_SEARCH
#include <cmath>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <sstream>
#include <thread>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/mesh.hpp"
#include "autoddl/costmodel/output_files.hpp"
#include "autoddl/costmodel/scheme_export.hpp"
#include "autoddl/costmodel/scheme_json.hpp"
#include "autoddl/search/explain.hpp"
#include "autoddl/search/searcher.hpp"
#include "cli_util.hpp"
#include "commands.hpp"
#include "search_sync.hpp"
#include "validation_band.hpp"

namespace autoddl::cli {
namespace {

struct SearchCliOptions {
  std::string model, knobs, cluster, mesh, method, out, json_file, export_format, runnable;
  std::optional<int> nodes;
  int pipeline_dim = -1;
  double time_limit_s = 60;
  double sync_weight = -1;
  int top = 10;
  int restarts = 2;
  int jobs = 0;  // 0 = every core
  int sync_trials = 200;  // --sync [N]: low-shot trials
  bool sync = false;      // --sync given
  uint64_t seed = 1;
  bool explain = false, tie_layers = false, no_zero = false, no_reconcile = false;
};

std::vector<std::string> split_methods(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  if (out.empty()) throw InputError("--method", "", "needs at least one method");
  return out;
}

const search::SearchResult* find_result(const search::SearchRun& run, const std::string& method) {
  for (const auto& r : run.results) {
    if (r.method == method) return &r;
  }
  return nullptr;
}

// The fastest feasible baseline (dp, zero1, zero3, megatron, owt): what the speedups compare
// with. An infeasible expert is no reference (dp of GPT-3 needs terabytes per GPU).
const search::SearchResult* best_expert(const search::SearchRun& run) {
  const search::SearchResult* ref = nullptr;
  for (const auto& r : run.results) {
    const search::Searcher* s = search::find_searcher(r.method);
    if (!s || !s->baseline || !r.unavailable.empty() || !r.report.feasible) continue;
    if (!ref || r.report.iteration_s < ref->report.iteration_s) ref = &r;
  }
  return ref;
}

// How far the method got on the tables' objective from the ILP's bound: its lowest objective
// reached, not the objective of the scheme evaluate() ranked first.
std::optional<double> gap_of(const search::SearchResult& r) {
  const std::optional<double> obj = r.best_objective_s ? r.best_objective_s : r.objective_s;
  if (!obj || !r.bound_s || *obj <= 0) return std::nullopt;
  return std::max(0.0, (*obj - *r.bound_s) / *obj);
}

// `ref`: the fastest feasible baseline (best_expert), the speedups' reference; may be null.
void print_table(const search::SearchRun& run, const costmodel::Graph& g, int top, const search::SearchResult* ref) {
  std::printf("%4s  %-9s %12s %9s %10s %9s %9s %8s  %s\n", "rank", "method", "iteration", "vs expert", "peak mem",
              "feasible", "search", "obj gap", "note");
  int rank = 0;
  for (const auto& r : run.results) {
    if (++rank > top) break;
    if (!r.unavailable.empty()) {
      std::printf("%4d  %-9s %12s %9s %10s %9s %7.2f s %8s  %s\n", rank, r.method.c_str(), "-", "-", "-", "NO",
                  r.search_s, "-", r.unavailable.c_str());
      continue;
    }
    char speed[16] = "-", gap[16] = "-";
    if (ref && r.report.feasible && r.report.iteration_s > 0) {
      std::snprintf(speed, sizeof speed, "%.2fx", ref->report.iteration_s / r.report.iteration_s);
    }
    if (auto x = gap_of(r)) std::snprintf(gap, sizeof gap, "%.2f%%", *x * 100);
    std::string note = r.note;
    if (r.optimal && note.empty()) note = "optimal";
    std::printf("%4d  %-9s %12s %9s %7.2f GB %9s %7.2f s %8s  %s\n", rank, r.method.c_str(),
                human_seconds(r.report.iteration_s).c_str(), speed, r.report.peak_memory_bytes / 1e9,
                r.report.feasible ? "yes" : "NO", r.search_s, gap, note.c_str());
  }
  for (const auto& [m, why] : run.skipped) std::printf("  skipped %s: %s\n", m.c_str(), why.c_str());
  if (ref) std::printf("  vs expert: speedup over the fastest feasible baseline, %s\n", ref->method.c_str());
  (void)g;
}

// search::explain's rows: per layer what was chosen and what it costs, and against the best
// expert (when the result is not that expert) where it differs and what the change buys.
void print_explain(const search::SearchResult& best, const costmodel::Graph& g, const search::SearchResult* expert) {
  using namespace costmodel;
  if (expert == &best) expert = nullptr;
  const search::Explanation e = search::explain(best, g, expert);
  std::printf("\nexplain %s (per iteration; weight:SBP as used, @storage when stored otherwise; -> output SBP)\n",
              best.method.c_str());
  std::printf("  %-34s %10s %10s %10s  %s\n", "layer", "compute", "boxing", "grad sync", "chosen");
  for (const search::ExplainRow& r : e.rows) {
    std::printf("  %-34s %10s %10s %10s  %s\n", r.span.c_str(), human_seconds(r.compute_s).c_str(),
                human_seconds(r.boxing_s).c_str(), human_seconds(r.sync_s).c_str(), r.choice.c_str());
    if (!r.reference.empty()) {
      std::printf("  %-34s %32s  %s: %s\n", "", ("(" + e.reference_method + " " + human_seconds(r.reference_s) + ")").c_str(),
                  e.reference_method.c_str(), r.reference.c_str());
    }
  }
  const Scheme& s = best.scheme;
  const std::string chunks = s.virtual_stages > 1 ? ", interleaved: " + std::to_string(s.virtual_stages) + " chunks per stage" : "";
  std::printf("  grad sync overlaps the backward; exposed %s of %s. Mesh %s, %d micro-batch(es), recompute %s%s.\n",
              human_seconds(best.report.grad_sync_exposed_s).c_str(), human_seconds(best.report.grad_sync_s).c_str(),
              best.report.mesh.c_str(), s.micro_batches, std::string(recompute_name(s.recompute)).c_str(), chunks.c_str());
  if (e.experts) {
    const search::Explanation::Experts& x = *e.experts;
    std::printf("  experts: ep=%lld (%lld of %lld routed experts per GPU), etp=%lld; all-to-all %s exposed\n",
                static_cast<long long>(x.ep), static_cast<long long>(x.experts / x.ep), static_cast<long long>(x.experts),
                static_cast<long long>(x.etp), human_seconds(x.all_to_all_exposed_s).c_str());
    if (!e.expert_alternatives.empty()) {
      std::printf("  %s's best point per expert layout, fastest first (iteration, all-to-all exposed):\n",
                  e.reference_method.c_str());
      for (const search::Explanation::ExpertAlternative& a : e.expert_alternatives) {
        std::printf("    %-14s %12s %12s%s\n", a.layout.c_str(), human_seconds(a.iteration_s).c_str(),
                    human_seconds(a.all_to_all_exposed_s).c_str(), a.feasible ? "" : "  does not fit");
      }
    }
  }
  if (!e.reference_method.empty()) {
    auto signed_s = [](double x) { return std::string(x < 0 ? "-" : "+") + human_seconds(std::abs(x)); };
    std::printf("  vs %s (%s): %d of %d layers and ops outside layers differ; iteration %s (compute %s, exposed communication %s, "
                "bubble %s), peak memory %+.2f GB\n",
                e.reference_method.c_str(), expert->scheme.name.c_str(), e.rows_changed, e.rows_total, signed_s(e.iteration_delta_s).c_str(),
                signed_s(e.compute_delta_s).c_str(), signed_s(e.comm_delta_s).c_str(), signed_s(e.bubble_delta_s).c_str(),
                e.memory_delta_bytes / 1e9);
    for (const std::string& c : e.config_changes) std::printf("  differs from %s in: %s\n", e.reference_method.c_str(), c.c_str());
    // What the scheme changes against the expert layout, per op position (most layers first).
    if (!e.changes.empty()) std::printf("  changes vs %s, per op position (as used @stored; -> output):\n", e.reference_method.c_str());
    const size_t shown = std::min<size_t>(e.changes.size(), 12);
    int width = 0;
    for (size_t k = 0; k < shown; ++k) width = std::max(width, static_cast<int>(e.changes[k].op.size()));
    for (size_t k = 0; k < shown; ++k) {
      const search::ExplainChange& c = e.changes[k];
      std::string where = c.first.empty() ? std::string() : " (" + c.first + (c.count > 1 ? " .. " + c.last : "") + ")";
      std::printf("    %-*s  %s  =>  %s   in %d of %d%s\n", width, c.op.c_str(), c.from.c_str(), c.to.c_str(), c.count, c.of,
                  (c.first.empty() ? "" : " layers" + where).c_str());
    }
    if (e.changes.size() > shown) std::printf("    ... and %zu more\n", e.changes.size() - shown);
  }
}

// Which export formats run a scheme (export_formats(), every one that accepts it), and when
// none does, why: the first op no Megatron layout runs that way.
struct Runnable {
  std::vector<std::string> formats;
  std::string why_not;
};
Runnable runnable(const costmodel::Graph& g, const costmodel::ClusterSpec& c, const costmodel::Scheme& s) {
  Runnable r;
  const std::optional<costmodel::MegatronLayout> layout = costmodel::exportable_layout(g, c, s, r.why_not);
  if (!layout) return r;
  for (const costmodel::ExportFormat& f : costmodel::export_formats()) {
    try {
      f.write(g, *layout);
      r.formats.emplace_back(f.name);
    } catch (const InputError& e) {
      if (r.why_not.empty()) r.why_not = std::string(f.name) + ": " + e.reason();
    }
  }
  if (!r.formats.empty()) r.why_not.clear();
  return r;
}

// --runnable FORMAT: drop every result FORMAT cannot run (and the methods that found none), so
// the table, the best and the exported scheme are all layouts that framework launches.
void keep_runnable(search::SearchRun& run, std::vector<Runnable>& runs, std::string_view format) {
  std::vector<search::SearchResult> results;
  std::vector<Runnable> kept;
  for (size_t i = 0; i < run.results.size(); ++i) {
    const std::vector<std::string>& f = runs[i].formats;
    if (std::find(f.begin(), f.end(), format) == f.end()) continue;
    results.push_back(std::move(run.results[i]));
    kept.push_back(std::move(runs[i]));
  }
  run.results = std::move(results);
  runs = std::move(kept);
}

nlohmann::json result_json(const search::SearchResult& r, const search::SearchResult* dp,
                           const search::SearchResult* ref, const Runnable& run) {
  if (!r.unavailable.empty()) {
    return {{"method", r.method}, {"iteration_s", nullptr}, {"feasible", false}, {"search_s", r.search_s},
            {"infeasible_reason", r.unavailable}, {"note", "no scheme: " + r.unavailable}};
  }
  nlohmann::json j = {{"method", r.method},
                      {"scheme", r.scheme.name},
                      {"iteration_s", r.report.iteration_s},
                      {"feasible", r.report.feasible},
                      {"search_s", r.search_s},
                      {"peak_memory_bytes", r.report.peak_memory_bytes},
                      {"memory_margin_bytes", r.report.memory_capacity_bytes - r.report.peak_memory_bytes},
                      {"samples_per_s", r.report.samples_per_s},
                      {"model_tflops_per_gpu", r.report.model_tflops_per_gpu},
                      {"optimal", r.optimal},
                      {"note", r.note},
                      {"details", r.details}};
  if (!r.report.feasible) j["infeasible_reason"] = r.report.infeasible_reason;
  if (dp && dp->report.feasible && r.report.iteration_s > 0) j["speedup_vs_dp"] = dp->report.iteration_s / r.report.iteration_s;
  if (ref && r.report.feasible && r.report.iteration_s > 0) {
    j["speedup_vs_best_expert"] = ref->report.iteration_s / r.report.iteration_s;
  }
  if (r.objective_s) j["objective_s"] = *r.objective_s;
  if (r.reconciled_objective_s) j["reconciled_objective_s"] = *r.reconciled_objective_s;
  if (r.best_objective_s) j["best_objective_s"] = *r.best_objective_s;
  if (r.bound_s) j["bound_s"] = *r.bound_s;
  if (auto x = gap_of(r)) j["gap"] = *x;
  j["runnable"] = run.formats;
  if (run.formats.empty()) j["autoddl_only"] = run.why_not;
  return j;
}

int run_search_cmd(const SearchCliOptions& opt) {
  using namespace costmodel;
  const auto t0 = std::chrono::steady_clock::now();
  // An unknown export format is an input error before any search time is spent.
  std::vector<const ExportFormat*> export_formats;
  for (size_t i = 0; !opt.export_format.empty() && i <= opt.export_format.size();) {
    size_t j = opt.export_format.find(',', i);
    if (j == std::string::npos) j = opt.export_format.size();
    try {
      export_formats.push_back(&find_export_format(opt.export_format.substr(i, j - i)));
    } catch (const InputError& e) {
      throw InputError("--export", "", e.reason());
    }
    i = j + 1;
  }
  const ExportFormat* runnable_format = nullptr;
  if (!opt.runnable.empty()) {
    try {
      runnable_format = &find_export_format(opt.runnable);
    } catch (const InputError& e) {
      throw InputError("--runnable", "", e.reason());
    }
  }
  Graph g = load_model(opt.model, opt.knobs);
  ClusterSpec c = resolve_cluster(opt.cluster, opt.nodes);
  search::SearchOptions so;
  if (!opt.mesh.empty()) so.mesh_shape = parse_mesh_shape(opt.mesh);
  so.pipeline_dim = opt.pipeline_dim;
  if (!(opt.time_limit_s > 0) || !std::isfinite(opt.time_limit_s)) {
    throw InputError("--time-limit", "", "must be a finite number > 0 seconds");
  }
  so.time_limit_s = opt.time_limit_s;
  so.seed = opt.seed;
  if (opt.restarts < 0 || opt.restarts > 10000) throw InputError("--restarts", "", "must be from 0 to 10000");
  so.random_restarts = opt.restarts;
  if (opt.jobs < 0) throw InputError("--jobs", "", "must be >= 0");
  so.jobs = opt.jobs > 0 ? opt.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  so.tie_layers = opt.tie_layers;
  so.zero_storage = !opt.no_zero;
  so.reconcile_objective = !opt.no_reconcile;
  if (opt.sync_weight != -1 && !(opt.sync_weight >= 0 && std::isfinite(opt.sync_weight))) {
    throw InputError("--sync-weight", "", "must be -1 (probe) or a finite number >= 0");
  }
  so.sync_weight = opt.sync_weight;
  if (opt.sync && (opt.sync_trials < 1 || opt.sync_trials > 100000))
    throw InputError("--sync", "", "trials must be from 1 to 100000");
  // A progress line on stderr once a search has run for a second (overwritten in place on a tty).
  // On a terminal one line is rewritten in place; otherwise a line every 5 s at most.
  const bool tty = isatty(fileno(stderr));
  bool printed = false;
  double last = -1e9;
  so.progress = [&](const std::string& line) {
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (t < 1 || t - last < (tty ? 0.2 : 5)) return;
    last = t;
    std::fprintf(stderr, tty ? "\r\033[K[%6.1f s] %s" : "[%6.1f s] %s\n", t, line.c_str());
    printed = true;
  };
  search::SearchRun run = search::run_search(g, c, so, split_methods(opt.method));
  if (printed && tty) std::fprintf(stderr, "\r\033[K");
  // Which frameworks run each result, matched once per result (results[0] is the best).
  std::vector<Runnable> runs(run.results.size());
  for (size_t i = 0; i < run.results.size(); ++i) {
    if (run.results[i].unavailable.empty()) runs[i] = runnable(g, c, run.results[i].scheme);
  }
  const size_t found = run.results.size();
  if (runnable_format) keep_runnable(run, runs, runnable_format->name);

  int devices = 1;
  std::vector<int> mesh = so.mesh_shape.empty() ? default_mesh(c).shape() : so.mesh_shape;
  for (int x : mesh) devices *= x;
  std::string mesh_text;
  for (int x : mesh) mesh_text += (mesh_text.empty() ? "" : "x") + std::to_string(x);
  std::printf("autoddl search: %s (%s params, batch %lld) on %s, %d GPUs, mesh %s%s; seed %llu\n", g.name.c_str(),
              human_count(static_cast<double>(g.parameter_count())).c_str(), static_cast<long long>(g.batch),
              c.name.c_str(), devices, mesh_text.c_str(),
              so.pipeline_dim >= 0 ? (", pipeline dim " + std::to_string(so.pipeline_dim)).c_str() : "",
              static_cast<unsigned long long>(opt.seed));
  if (!run.config.is_null()) {
    std::printf("tables: %d micro-batch(es), recompute %s, %d ops in %d classes, %d terms, set up in %.2f s\n",
                run.config["micro_batches"].get<int>(), run.config["recompute"].get<std::string>().c_str(),
                run.config["ops"].get<int>(), run.config["op_classes"].get<int>(), run.config["terms"].get<int>(),
                run.config["seconds"].get<double>());
  }
  if (runnable_format) {
    std::printf("only layouts %s runs: %zu of %zu results kept\n", std::string(runnable_format->name).c_str(),
                run.results.size(), found);
  }
  std::printf("\n");
  const search::SearchResult* ref = best_expert(run);
  print_table(run, g, opt.top, ref);
  const search::SearchResult* best = run.results.empty() || !run.results.front().unavailable.empty()
                                         ? nullptr
                                         : &run.results.front();
  const search::SearchResult* dp = find_result(run, "dp");
  if (dp && !dp->unavailable.empty()) dp = nullptr;
  if (best) {
    std::printf("\nbest: %s, %s per iteration%s", best->method.c_str(), human_seconds(best->report.iteration_s).c_str(),
                best->report.feasible ? "" : " (INFEASIBLE: nothing fits)");
    if (ref && best->report.feasible) {
      std::printf(", %.2fx over the best expert (%s)", ref->report.iteration_s / best->report.iteration_s, ref->method.c_str());
    }
    std::printf("%s\n", opt.out.empty() ? "" : (" -> " + opt.out).c_str());
    std::printf("validation band: %s\n", band_line(validation_band(c, g, best->report)).c_str());
    std::printf("memory: peak %.2f GB, margin %.2f GB %s\n", best->report.peak_memory_bytes / 1e9,
                (best->report.memory_capacity_bytes - best->report.peak_memory_bytes) / 1e9,
                memory_reserve_words(best->report).c_str());
    const Runnable& best_runs = runs.front();
    std::string by;
    for (const std::string& f : best_runs.formats) by += (by.empty() ? "" : ", ") + f;
    std::printf("runnable by: %s\n", by.empty() ? ("none (autoddl-only: " + best_runs.why_not + ")").c_str() : by.c_str());
    // The fastest feasible result that `format` runs (any framework when empty): results are
    // ranked, so the first one; run.results.size() when there is none.
    auto best_run_by = [&](const std::string& format) {
      for (size_t i = 0; i < run.results.size(); ++i) {
        const search::SearchResult& r = run.results[i];
        const auto& f = runs[i].formats;
        if (r.unavailable.empty() && r.report.feasible &&
            (format.empty() ? !f.empty() : std::find(f.begin(), f.end(), format) != f.end()))
          return i;
      }
      return run.results.size();
    };
    if (by.empty()) {
      // Beside the best overall, the fastest result a framework runs.
      if (const size_t i = best_run_by(""); i < run.results.size()) {
        const search::SearchResult& r = run.results[i];
        std::printf("best runnable: %s, %s per iteration (%.2fx the best's time)\n", r.method.c_str(),
                    human_seconds(r.report.iteration_s).c_str(), r.report.iteration_s / best->report.iteration_s);
      }
    }
    if (run.ilp_bound_s) {
      std::printf("ILP lower bound on the search's table objective (its additive surrogate of the iteration): %s\n",
                  human_seconds(*run.ilp_bound_s).c_str());
    }
    if (opt.explain) print_explain(*best, g, ref);
    for (const ExportFormat* export_format : export_formats) {
      // The search succeeded either way: a best scheme the framework cannot run is said so in one
      // line (the first op that differs from the nearest Megatron layout), followed by the
      // settings of the fastest result it runs, with that result's own time.
      const std::string name(export_format->name);
      try {
        const std::string text = export_scheme(*export_format, g, c, best->scheme);
        std::printf("\n%s settings for the best scheme (%s):\n%s", name.c_str(),
                    std::string(export_format->version).c_str(), text.c_str());
        continue;
      } catch (const InputError& e) {
        std::printf("\n%s\n", e.reason().c_str());  // "<format> cannot run it: <why>"
      }
      if (const size_t i = best_run_by(name); i < run.results.size()) {
        const search::SearchResult& r = run.results[i];
        std::printf("%s settings for the best result it runs, rank %zu (%s, %s per iteration, %.2fx the best's time; %s):\n%s",
                    name.c_str(), i + 1, r.method.c_str(), human_seconds(r.report.iteration_s).c_str(),
                    r.report.iteration_s / best->report.iteration_s, std::string(export_format->version).c_str(),
                    export_scheme(*export_format, g, c, r.scheme).c_str());
      }
    }
  }
  nlohmann::json sync_json;
  if (best && opt.sync) sync_json = search_best_sync(g, c, *best, opt.sync_trials, opt.seed);
  OutputFiles out;
  if (best && !opt.out.empty()) out.add_json(opt.out, scheme_to_json(best->scheme, g));
  if (!opt.json_file.empty()) {
    nlohmann::json j = {{"model", g.name}, {"cluster", c.name}, {"mesh", mesh}, {"pipeline_dim", so.pipeline_dim},
                        {"seed", opt.seed}, {"random_restarts", opt.restarts}, {"time_limit_s", opt.time_limit_s},
                        {"tie_layers", opt.tie_layers}, {"zero_storage", so.zero_storage},
                        {"reconcile_objective", so.reconcile_objective}};
    j["results"] = nlohmann::json::array();
    for (size_t i = 0; i < run.results.size(); ++i) j["results"].push_back(result_json(run.results[i], dp, ref, runs[i]));
    j["skipped"] = nlohmann::json::array();
    for (const auto& [m, why] : run.skipped) j["skipped"].push_back({{"method", m}, {"reason", why}});
    if (!run.config.is_null()) j["tables"] = run.config;
    if (run.ilp_bound_s) j["ilp_bound_s"] = *run.ilp_bound_s;
    if (best) {
      j["best"] = result_json(*best, dp, ref, runs.front());
      if (ref) j["best_expert"] = ref->method;
      j["best"]["scheme_json"] = scheme_to_json(best->scheme, g);
      j["best"]["validation_band"] = band_json(validation_band(c, g, best->report));
    }
    if (!sync_json.is_null()) j["sync"] = sync_json;
    out.add_json(opt.json_file, j);
  }
  out.commit();
  return 0;
}

}  // namespace

RunFn setup_search(CLI::App& sub) {
  auto opt = std::make_shared<SearchCliOptions>();
  add_model_options(sub, opt->model, opt->knobs);
  add_cluster_options(sub, opt->cluster, opt->nodes, &opt->mesh);
  sub.add_option("--pipeline-dim", opt->pipeline_dim,
                 "Mesh dim used as pipeline stages (layers are partitioned by DP); -1 = none")
      ->capture_default_str();
  std::string names;
  for (const auto& s : search::searchers()) names += std::string(names.empty() ? "" : ", ") + std::string(s.name);
  for (const std::string& m : search::default_methods()) opt->method += (opt->method.empty() ? "" : ",") + m;
  sub.add_option("--method", opt->method,
                 "Comma-separated methods: " + names + ", baselines (every baseline), all (every method)")
      ->capture_default_str();
  sub.add_option("--time-limit", opt->time_limit_s, "Seconds per method (CD stops, ILP reports its bound; cd-mesh ends by 9/10 of it from the search's start)")
      ->capture_default_str();
  sub.add_option("--top", opt->top, "Rows of the ranked table")->capture_default_str()->check(integer_at_least(0));
  sub.add_option("--out", opt->out, "Write the best scheme as scheme JSON to FILE (autoddl cost --scheme FILE)");
  sub.add_option("--export", opt->export_format,
                 "Also print the best scheme as these frameworks' settings (comma-separated `autoddl export --to` "
                 "formats); for a best scheme a framework cannot run, one line why and the settings of the best "
                 "result it runs");
  sub.add_option("--runnable", opt->runnable,
                 "Keep only the results this framework runs (an `autoddl export --to` format, e.g. megatron-lm)");
  sub.add_option("--json", opt->json_file, "Write every result, the tables' configuration and the best scheme to FILE");
  sub.add_flag("--explain", opt->explain, "Per layer: what the best scheme chose and what it costs");
  sub.add_option("--seed", opt->seed, "Seed of the random restarts (echoed in the output)")
      ->capture_default_str()
      ->check(non_negative_integer());
  sub.add_option("--restarts", opt->restarts, "Random restarts of coordinate descent")->capture_default_str();
  sub.add_option("--jobs", opt->jobs,
                 "Threads for the sync-weight probes, the descents from each seed and cd-expert's starts; "
                 "0 = every core (results do not depend on it)")
      ->capture_default_str();
  sub.add_flag("--tie-layers", opt->tie_layers, "Identical layers take identical choices (smaller search, ILP)");
  sub.add_option("--sync-weight", opt->sync_weight,
                 "Weight of gradient sync in the search objective (it partly overlaps the backward); "
                 "-1 = probe 1, 0.5, 0.25, 0 and keep the best")
      ->capture_default_str();
  sub.add_flag("--no-zero", opt->no_zero, "Do not offer ZeRO-3 parameter storage to the search");
  sub.add_flag("--no-reconcile", opt->no_reconcile,
               "End cd, cd-nbh, cd-mesh and cd-expert at their descent's answer instead of descending again under the "
               "sync weight at which the objective equals evaluate() there (docs/search.md)");
  CLI::Option* sync = sub.add_option("--sync", opt->sync_trials,
                 "Then run AutoSync's low-shot sync search (N trials) on the best scheme's data-parallel gradient "
                 "sync and report its iteration next to DDP's")
      ->expected(0, 1)
      ->default_str("200");
  return [opt, sync] {
    opt->sync = sync->count() > 0;
    return run_search_cmd(*opt);
  };
}

}  // namespace autoddl::cli
#endif  // AUTODDL_HAVE_SEARCH
