// `autoddl search`: find a fast scheme for a model on a cluster (search/ methods: coordinate
// descent, neighbourhood CD, exact ILP and DP, baselines), print them ranked by the cost model's
// iteration time, explain the winner per layer, and write it as a scheme JSON that
// `autoddl cost --scheme FILE` re-costs to the same time.
#ifdef AUTODDL_HAVE_SEARCH
#include <cmath>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <sstream>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/mesh.hpp"
#include "autoddl/costmodel/scheme_json.hpp"
#include "autoddl/search/searcher.hpp"
#include "cli_util.hpp"
#include "commands.hpp"

namespace autoddl::cli {
namespace {

struct SearchCliOptions {
  std::string model, knobs, cluster, mesh, method = "cd,cd-nbh,baselines", out, json_file;
  std::optional<int> nodes;
  int pipeline_dim = -1;
  double time_limit_s = 60;
  double sync_weight = -1;
  int top = 10;
  int restarts = 2;
  uint64_t seed = 1;
  bool explain = false, tie_layers = false, no_zero = false;
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

std::optional<double> gap_of(const search::SearchResult& r) {
  if (!r.objective_s || !r.bound_s || *r.objective_s <= 0) return std::nullopt;
  return std::max(0.0, (*r.objective_s - *r.bound_s) / *r.objective_s);
}

void print_table(const search::SearchRun& run, const costmodel::Graph& g, int top) {
  const search::SearchResult* dp = find_result(run, "dp");
  if (dp && !dp->unavailable.empty()) dp = nullptr;
  std::printf("%4s  %-9s %12s %8s %10s %9s %9s %8s  %s\n", "rank", "method", "iteration", "vs dp", "peak mem",
              "feasible", "search", "obj gap", "note");
  int rank = 0;
  for (const auto& r : run.results) {
    if (++rank > top) break;
    if (!r.unavailable.empty()) {
      std::printf("%4d  %-9s %12s %8s %10s %9s %7.2f s %8s  %s\n", rank, r.method.c_str(), "-", "-", "-", "NO",
                  r.search_s, "-", r.unavailable.c_str());
      continue;
    }
    char speed[16] = "-", gap[16] = "-";
    if (dp && r.report.iteration_s > 0) std::snprintf(speed, sizeof speed, "%.2fx", dp->report.iteration_s / r.report.iteration_s);
    if (auto x = gap_of(r)) std::snprintf(gap, sizeof gap, "%.2f%%", *x * 100);
    std::string note = r.note;
    if (r.optimal && note.empty()) note = "optimal";
    std::printf("%4d  %-9s %12s %8s %7.2f GB %9s %7.2f s %8s  %s\n", rank, r.method.c_str(),
                human_seconds(r.report.iteration_s).c_str(), speed, r.report.peak_memory_bytes / 1e9,
                r.report.feasible ? "yes" : "NO", r.search_s, gap, note.c_str());
  }
  for (const auto& [m, why] : run.skipped) std::printf("  skipped %s: %s\n", m.c_str(), why.c_str());
  (void)g;
}

// Per layer (runs of ops with one Op::block label): what was chosen and what it costs, with
// runs of identical layers folded into one row.
void print_explain(const search::SearchResult& best, const costmodel::Graph& g) {
  using namespace costmodel;
  const Scheme& s = best.scheme;
  struct Row {
    std::string label, choice;
    double compute = 0, boxing = 0, sync = 0;
    int count = 1;
    std::string last;
  };
  std::vector<Row> rows;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    std::string label = op.block.empty() ? "(" + op.name + ")" : op.block;
    if (s.stages() > 1) label = "[stage " + std::to_string(best.report.per_op[i].stage) + "] " + label;
    if (rows.empty() || (op.block.empty() ? true : rows.back().label != label)) rows.push_back({label, "", 0, 0, 0, 1, label});
    Row& row = rows.back();
    const OpCostRow& c = best.report.per_op[i];
    row.compute += c.compute_s;
    row.boxing += c.boxing_s;
    row.sync += c.grad_sync_s;
    const OpSignature& sig = s.op_sigs[i];
    std::string short_name = op.name.substr(op.block.empty() ? 0 : op.block.size() + 1);
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      const Tensor& t = g.tensors[op.inputs[k]];
      if (t.role != TensorRole::parameter || t.shape.size() < 2) continue;  // weights, not biases/norms
      row.choice += (row.choice.empty() ? "" : " ") + short_name + ":" + to_string(sig.in[k]);
      const NdSbp& st = s.param_storage[op.inputs[k]];
      if (!(st == sig.in[k])) row.choice += "@" + to_string(st);
    }
    if (i + 1 == g.ops.size() || g.ops[i + 1].block != op.block || op.block.empty()) {
      // the row's output activation SBP
      if (!op.outputs.empty()) row.choice += std::string(row.choice.empty() ? "" : " ") + "-> " + to_string(sig.out[0]);
    }
  }
  // Fold consecutive layers with the same choices and (within 0.1%) the same cost.
  std::vector<Row> folded;
  for (const Row& r : rows) {
    if (!folded.empty()) {
      Row& f = folded.back();
      const double a = (f.compute + f.boxing + f.sync) / f.count, b = r.compute + r.boxing + r.sync;
      const bool layer = f.label.back() != ')' && r.label.back() != ')';
      const bool same_stage = f.label.rfind("[stage", 0) != 0 || f.label.substr(0, f.label.find(']')) == r.label.substr(0, r.label.find(']'));
      if (f.choice == r.choice && layer && same_stage && std::abs(a - b) <= 1e-3 * std::max(a, b)) {
        f.compute += r.compute;
        f.boxing += r.boxing;
        f.sync += r.sync;
        f.count += 1;
        f.last = r.label.rfind("[stage", 0) == 0 ? r.label.substr(r.label.find(']') + 2) : r.label;
        continue;
      }
    }
    folded.push_back(r);
  }
  std::printf("\nexplain %s (per iteration; weight:SBP as used, @storage when stored otherwise; -> output SBP)\n",
              best.method.c_str());
  std::printf("  %-34s %10s %10s %10s  %s\n", "layer", "compute", "boxing", "grad sync", "chosen");
  for (const Row& r : folded) {
    std::string label = r.count > 1 ? r.label + " .. " + r.last + " (x" + std::to_string(r.count) + ", each)" : r.label;
    const double n = r.count;
    std::printf("  %-34s %10s %10s %10s  %s\n", label.c_str(), human_seconds(r.compute / n).c_str(),
                human_seconds(r.boxing / n).c_str(), human_seconds(r.sync / n).c_str(), r.choice.c_str());
  }
  std::printf("  grad sync overlaps the backward; exposed %s of %s. Mesh %s, %d micro-batch(es), recompute %s.\n",
              human_seconds(best.report.grad_sync_exposed_s).c_str(), human_seconds(best.report.grad_sync_s).c_str(),
              best.report.mesh.c_str(), s.micro_batches, std::string(recompute_name(s.recompute)).c_str());
}

nlohmann::json result_json(const search::SearchResult& r, const search::SearchResult* dp) {
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
                      {"samples_per_s", r.report.samples_per_s},
                      {"model_tflops_per_gpu", r.report.model_tflops_per_gpu},
                      {"optimal", r.optimal},
                      {"note", r.note},
                      {"details", r.details}};
  if (!r.report.feasible) j["infeasible_reason"] = r.report.infeasible_reason;
  if (dp && r.report.iteration_s > 0) j["speedup_vs_dp"] = dp->report.iteration_s / r.report.iteration_s;
  if (r.objective_s) j["objective_s"] = *r.objective_s;
  if (r.bound_s) j["bound_s"] = *r.bound_s;
  if (auto g = gap_of(r)) j["gap"] = *g;
  return j;
}

int run_search_cmd(const SearchCliOptions& opt) {
  using namespace costmodel;
  const auto t0 = std::chrono::steady_clock::now();
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
  if (opt.restarts < 0) throw InputError("--restarts", "", "must be >= 0");
  so.random_restarts = opt.restarts;
  so.tie_layers = opt.tie_layers;
  so.zero_storage = !opt.no_zero;
  so.sync_weight = opt.sync_weight;
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
  std::printf("\n");
  print_table(run, g, opt.top);
  const search::SearchResult* best = run.results.empty() || !run.results.front().unavailable.empty()
                                         ? nullptr
                                         : &run.results.front();
  const search::SearchResult* dp = find_result(run, "dp");
  if (dp && !dp->unavailable.empty()) dp = nullptr;
  if (best) {
    std::printf("\nbest: %s, %s per iteration%s", best->method.c_str(), human_seconds(best->report.iteration_s).c_str(),
                best->report.feasible ? "" : " (INFEASIBLE: nothing fits)");
    if (dp) std::printf(", %.2fx over dp", dp->report.iteration_s / best->report.iteration_s);
    std::printf("%s\n", opt.out.empty() ? "" : (" -> " + opt.out).c_str());
    if (run.ilp_bound_s) {
      std::printf("ILP lower bound on the search's table objective (its additive surrogate of the iteration): %s\n",
                  human_seconds(*run.ilp_bound_s).c_str());
    }
    if (opt.explain) print_explain(*best, g);
    if (!opt.out.empty()) write_json_atomic(opt.out, scheme_to_json(best->scheme, g));
  }
  if (!opt.json_file.empty()) {
    nlohmann::json j = {{"model", g.name}, {"cluster", c.name}, {"mesh", mesh}, {"pipeline_dim", so.pipeline_dim},
                        {"seed", opt.seed}, {"random_restarts", opt.restarts}, {"time_limit_s", opt.time_limit_s},
                        {"tie_layers", opt.tie_layers}, {"zero_storage", so.zero_storage}};
    j["results"] = nlohmann::json::array();
    for (const auto& r : run.results) j["results"].push_back(result_json(r, dp));
    j["skipped"] = nlohmann::json::array();
    for (const auto& [m, why] : run.skipped) j["skipped"].push_back({{"method", m}, {"reason", why}});
    if (!run.config.is_null()) j["tables"] = run.config;
    if (run.ilp_bound_s) j["ilp_bound_s"] = *run.ilp_bound_s;
    if (best) {
      j["best"] = result_json(*best, dp);
      j["best"]["scheme_json"] = scheme_to_json(best->scheme, g);
    }
    write_json_atomic(opt.json_file, j);
  }
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
  sub.add_option("--method", opt->method,
                 "Comma-separated methods: " + names + ", baselines (every baseline), all (every method)")
      ->capture_default_str();
  sub.add_option("--time-limit", opt->time_limit_s, "Seconds per method (CD stops, ILP reports its bound)")
      ->capture_default_str();
  sub.add_option("--top", opt->top, "Rows of the ranked table")->capture_default_str();
  sub.add_option("--out", opt->out, "Write the best scheme as scheme JSON to FILE (autoddl cost --scheme FILE)");
  sub.add_option("--json", opt->json_file, "Write every result, the tables' configuration and the best scheme to FILE");
  sub.add_flag("--explain", opt->explain, "Per layer: what the best scheme chose and what it costs");
  sub.add_option("--seed", opt->seed, "Seed of the random restarts (echoed in the output)")
      ->capture_default_str()
      ->check(non_negative_integer());
  sub.add_option("--restarts", opt->restarts, "Random restarts of coordinate descent")->capture_default_str();
  sub.add_flag("--tie-layers", opt->tie_layers, "Identical layers take identical choices (smaller search, ILP)");
  sub.add_option("--sync-weight", opt->sync_weight,
                 "Weight of gradient sync in the search objective (it partly overlaps the backward); "
                 "-1 = probe 1, 0.5, 0.25, 0 and keep the best")
      ->capture_default_str();
  sub.add_flag("--no-zero", opt->no_zero, "Do not offer ZeRO-3 parameter storage to the search");
  return [opt] { return run_search_cmd(*opt); };
}

}  // namespace autoddl::cli
#endif  // AUTODDL_HAVE_SEARCH
