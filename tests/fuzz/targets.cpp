// The fuzz targets (targets.hpp). Each parses through parse_json_text / parse_nccl_tests as the
// CLI does, then runs the first consumer: evaluate a scheme, fit a calibration, price a
// collective, expand a sweep, score with a ranker, summarize a sweep folder. Invariant: times and bytes of an accepted input are finite and >= 0.
#include "targets.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>

#include "autoddl/calib/fit.hpp"
#include "autoddl/calib/measurements.hpp"
#include "autoddl/calib/nccl_tests_parser.hpp"
#include "autoddl/calib/validation_compare.hpp"
#include "autoddl/calib/validation_format.hpp"
#include "autoddl/calib/validation_plan.hpp"
#include "autoddl/costmodel/calibration.hpp"
#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/collective.hpp"
#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/graph_json.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/scheme_json.hpp"
#include "autoddl/costmodel/zoo.hpp"
#include "autoddl/experiments/config.hpp"
#include "autoddl/experiments/matrix.hpp"
#include "autoddl/experiments/merge.hpp"
#include "autoddl/sync/analytical.hpp"
#include "autoddl/sync/autodist.hpp"
#include "autoddl/sync/autodist_proto.hpp"
#include "autoddl/sync/autodist_records.hpp"
#include "autoddl/sync/features.hpp"
#include "autoddl/sync/ranker.hpp"
#include "autoddl/sync/strategy_json.hpp"
#include "autoddl/sync/training.hpp"
#include "autoddl/sync/variables.hpp"

namespace autoddl::fuzz {
namespace {

using costmodel::ClusterSpec;
using costmodel::Graph;

[[noreturn]] void broken(const std::string& what) {
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what.c_str());
  std::abort();
}

void check_time(double v, const char* what) {
  if (!std::isfinite(v) || v < 0) broken(std::string(what) + " = " + std::to_string(v));
}

const ClusterSpec& dgx() {
  static const ClusterSpec c = costmodel::resolve_cluster("dgx-a100", 1);
  return c;
}
const Graph& gpt2() {
  static const Graph g = costmodel::build_zoo_model("gpt", {{"layers", "2"}});
  return g;
}
const Graph& mlp() {
  static const Graph g = costmodel::build_zoo_model("mlp", {});
  return g;
}

void check_report(const costmodel::CostReport& r) {
  check_time(r.iteration_s, "iteration_s");
  check_time(r.compute_s, "compute_s");
  check_time(r.comm_exposed_s, "comm_exposed_s");
  check_time(r.bubble_s, "bubble_s");
  check_time(r.peak_memory_bytes, "peak_memory_bytes");
}

void run_graph(const std::string& data) {
  const Graph g = costmodel::graph_from_json(parse_json_text(data, "graph.json"), "graph.json");
  check_report(costmodel::evaluate(g, dgx(), costmodel::make_scheme("dp", g, dgx(), {})));
}

void run_cluster(const std::string& data) {
  const ClusterSpec c = costmodel::cluster_from_json(parse_json_text(data, "cluster.json"), "cluster.json");
  const int ranks = c.total_gpus() < 16 ? c.total_gpus() : 16;
  // NCCL's model too (clusters with an nccl block), up to 4 nodes of 8: its fallback graphs
  // for links slower than its speed arrays once left no algorithm (an abort).
  const int nccl_ranks = c.total_gpus() < 32 ? c.total_gpus() : 32;
  for (double bytes : {8.0, 1e6, 1e9}) {
    check_time(costmodel::collective_time(c, costmodel::CollectiveKind::all_reduce,
                                          costmodel::contiguous_group(c, ranks), bytes).time_s,
               "all_reduce time_s");
    check_time(costmodel::nccl_collective_time(c, costmodel::CollectiveKind::all_reduce,
                                               costmodel::contiguous_group(c, nccl_ranks), bytes).time_s,
               "NCCL all_reduce time_s");
  }
  check_report(costmodel::evaluate(mlp(), c, costmodel::make_scheme("dp", mlp(), c, {})));
}

void run_scheme(const std::string& data) {
  const costmodel::Scheme s =
      costmodel::scheme_from_json(parse_json_text(data, "scheme.json"), gpt2(), dgx(), "scheme.json");
  check_report(costmodel::evaluate(gpt2(), dgx(), s));
}

void run_calibration(const std::string& data) {
  costmodel::calibration_from_json(parse_json_text(data, "calibration.json"), "calibration.json");
  // Accepted: attach it to a cluster as `calibration_file` does, and price with it.
  static const std::string path = "/tmp/autoddl-fuzz-calibration-" + std::to_string(::getpid()) + ".json";
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
  ClusterSpec c = dgx();
  c.calibration_file = path;
  costmodel::attach_calibration(c, ".");
  check_time(costmodel::collective_time(c, costmodel::CollectiveKind::all_reduce, costmodel::contiguous_group(c, 8),
                                        1e6).time_s,
             "calibrated all_reduce time_s");
  check_report(costmodel::evaluate(mlp(), c, costmodel::make_scheme("dp", mlp(), c, {})));
}

// What `autoddl fit` does after loading: fit, then the calibration must survive its own loader.
void fit_and_reload(const std::vector<calib::NcclTestsRun>& runs, const std::vector<calib::MeasurementFile>& files) {
  calib::FitOptions opt;
  opt.date = "2025-01-01T00:00:00Z";
  const calib::FitResult r = calib::fit_calibration(runs, files, opt);
  (void)calib::format_fit_report(r);
  costmodel::calibration_from_json(parse_json_text(dump_json(costmodel::calibration_to_json(r.calibration)), "fit"),
                                   "fit");
}

void run_measurement(const std::string& data) {
  calib::MeasurementFile m = calib::measurements_from_json(parse_json_text(data, "m.json"), "m.json");
  fit_and_reload({}, {m});
}

void run_nccl_tests(const std::string& data) {
  fit_and_reload(calib::parse_nccl_tests(data, "nccl.txt", std::nullopt), {});
}

void run_sync_strategy(const std::string& data) {
  const sync::Strategy s = sync::strategy_from_json(parse_json_text(data, "strategy.json"), "strategy.json");
  static const std::vector<sync::Variable> vars = sync::extract_variables(mlp());
  static const ClusterSpec c = costmodel::resolve_cluster("autosync-b");
  sync::validate_strategy(s, vars, c, "strategy.json");
  const sync::Evaluation e = sync::evaluate_analytical(mlp(), vars, s, c);
  check_time(e.iteration_s, "sync iteration_s");
  check_time(e.exposed_sync_s, "sync exposed_sync_s");
  (void)dump_json(sync::evaluation_to_json(e));
}

// An AutoDist strategy in any form (text, JSON, binary), mapped onto the MLP on autosync-b: an
// accepted one goes out in each form and reads back with the same variables.
void run_autodist_strategy(const std::string& data) {
  static const std::vector<sync::Variable> vars = sync::extract_variables(mlp());
  static const ClusterSpec c = costmodel::resolve_cluster("autosync-b");
  static const std::vector<std::string> hosts = sync::default_autodist_hosts(c.nodes);
  const sync::Strategy s =
      sync::strategy_from_autodist(sync::read_autodist_strategy(data, "strategy"), vars, c, hosts, "strategy");
  for (sync::AutodistFormat f : {sync::AutodistFormat::text, sync::AutodistFormat::json, sync::AutodistFormat::binary}) {
    const std::string out = sync::write_autodist_strategy(sync::strategy_to_autodist(s, vars, c, hosts), f);
    const sync::Strategy back = sync::strategy_from_autodist(sync::read_autodist_strategy(out, "again"), vars, c, hosts, "again");
    if (back.vars != s.vars) broken(std::string("AutoDist strategy changed through the ") + sync::autodist_format_name(f) + " form");
  }
}

// AutoDist's resource_spec.yml and AutoSync's runtime files (one small YAML reader).
void run_autodist_yaml(const std::string& data) {
  try {
    const sync::AutodistRuntime r = sync::parse_runtime(data, "runtime.yml");
    if (!(r.runtime_s > 0) || r.runtimes_s.empty()) broken("runtime accepted without a positive label");
  } catch (const InputError&) {
  }
  const sync::AutodistResourceSpec spec = sync::parse_resource_spec(data, "resource_spec.yml");
  if (spec.nodes.empty()) broken("resource spec accepted without nodes");
}

constexpr int64_t kMaxExpandedCells = 4096;

void run_sweep_config(const std::string& data) {
  const experiments::SweepConfig cfg =
      experiments::sweep_config_from_json(parse_json_text(data, "sweep.json"), "sweep.json");
  // The loader refuses more than the documented cell cap; below it a big product is legitimate
  // work (48k cells: 2 s in the release build, 49 s under ASan, a fuzzer "timeout" on
  // 2026-12-07): the count is checked always, the expansion for configs small enough to fuzz fast.
  const int64_t n = experiments::count_cells(cfg);
  if (n < 0) broken("negative cell count");
  if (n > kMaxExpandedCells) return;
  const std::vector<experiments::Cell> cells = experiments::expand_cells(cfg);
  if (static_cast<int64_t>(cells.size()) > n) broken("more cells than count_cells counted");
  for (const experiments::Cell& cell : cells) {
    if (cell.key.size() != 16) broken("cell key " + cell.key);
    (void)experiments::describe(cell.inputs);
  }
}

// `autoddl validate --measured`: the plan of tests/cli/validate_measured, then the comparison.
void run_validation_result(const std::string& data) {
  const calib::ValidationResult r = calib::result_from_json(parse_json_text(data, "measured.json"), "measured.json");
  static const ClusterSpec c = costmodel::resolve_cluster("dgx-h100", 1);
  static const Graph g = costmodel::build_zoo_model(
      "gpt", {{"layers", "1"}, {"hidden", "128"}, {"heads", "4"}, {"seq", "64"}, {"vocab", "512"}, {"batch", "4"}});
  static const calib::PlanBuild plan = calib::make_validation_plan(g, c, costmodel::make_scheme("dp", g, c, {1}));
  const calib::Comparison cmp = calib::compare_validation(plan.plan, r, "measured.json");
  (void)calib::format_comparison(cmp, 5);
  nlohmann::json j = cmp;
  (void)dump_json(j);
}

// Loaders that read a path (a folder's JSONL, a ranker file): the input goes to a file in this
// process's scratch folder first.
const std::string& scratch_dir() {
  static const std::string dir = [] {
    std::string d = "/tmp/autoddl-fuzz-" + std::to_string(::getpid());
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

std::string put(const std::string& name, const std::string& data) {
  const std::string path = scratch_dir() + "/" + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
  return path;
}

// `autoddl validate` and validate_runner: a plan file, then its fingerprint and JSON.
void run_validation_plan(const std::string& data) {
  const calib::ValidationPlan p = calib::read_plan_file(put("plan.json", data));
  if (calib::plan_fingerprint(p).empty()) broken("empty plan fingerprint");
  nlohmann::json j = p;
  (void)dump_json(j);
}

// `autoddl sync train/eval --data DIR`: records.jsonl, then the metrics of a ranking by index.
void run_sync_records(const std::string& data) {
  put("records.jsonl", data);
  const std::vector<sync::LabeledRecord> records = sync::read_records({scratch_dir()});
  std::vector<double> scores;
  for (const sync::LabeledRecord& r : records) {
    check_time(r.runtime_s, "record runtime_s");
    scores.push_back(r.index);
  }
  const sync::PairMetrics m = sync::pair_metrics(records, scores, 0.05);
  if (!(m.all.pairwise_accuracy >= 0 && m.all.pairwise_accuracy <= 1) && m.all.pairs > 0) {
    broken("pairwise accuracy " + std::to_string(m.all.pairwise_accuracy));
  }
}

// `autoddl sync eval --model-file` / `sync search --pretrained` with a linear ranker file: load,
// then score one sample of the real feature count.
void run_linear_ranker(const std::string& data) {
  std::unique_ptr<sync::Ranker> r = sync::make_linear_ranker();
  r->load(put("ranker.json", data));
  const sync::RankSample s{std::vector<double>(sync::feature_names().size(), 1.0), 1.0, 0};
  for (double v : r->score({s})) {
    if (!std::isfinite(v)) broken("ranker score " + std::to_string(v));
  }
}

// `autoddl sweep status DIR`: results.jsonl next to a fixed two-cell manifest.
void run_sweep_results(const std::string& data) {
  static const bool manifest = [] {
    put("sweep.json", R"({"name":"fuzz","config_file":"c.json","config":{},"cells":[)"
                      R"({"key":"0123456789abcdef","inputs":{"model":"mlp"}},)"
                      R"({"key":"fedcba9876543210","inputs":{"model":"gpt"}}]})");
    return true;
  }();
  (void)manifest;
  put("results.jsonl", data);
  const experiments::SweepStatus st = experiments::sweep_status(scratch_dir());
  if (st.ok + st.failed > st.cells || st.ok < 0 || st.failed < 0) broken("sweep status counts");
  for (const nlohmann::json& row : st.failed_rows) {  // as `autoddl sweep status` prints them
    (void)experiments::describe(row.contains("inputs") ? row["inputs"] : nlohmann::json());
  }
}

}  // namespace

const std::vector<Target>& targets() {
  static const std::vector<Target> all = {
      {"graph", run_graph},           {"cluster", run_cluster},         {"scheme", run_scheme},
      {"calibration", run_calibration}, {"measurement", run_measurement}, {"nccl_tests", run_nccl_tests},
      {"sync_strategy", run_sync_strategy}, {"sweep_config", run_sweep_config},
      {"validation_result", run_validation_result}, {"validation_plan", run_validation_plan},
      {"sync_records", run_sync_records},   {"linear_ranker", run_linear_ranker},
      {"sweep_results", run_sweep_results}, {"autodist_strategy", run_autodist_strategy},
      {"autodist_yaml", run_autodist_yaml},
  };
  return all;
}

const Target* find_target(std::string_view format) {
  for (const Target& t : targets()) {
    if (format == t.format) return &t;
  }
  return nullptr;
}

void run_checked(const Target& t, const std::string& data) {
  try {
    t.run(data);
  } catch (const InputError&) {
    // rejected cleanly: fine
  } catch (const std::exception& e) {
    broken(std::string(t.format) + ": exception other than InputError: " + e.what());
  } catch (...) {
    broken(std::string(t.format) + ": non-standard exception");
  }
}

}  // namespace autoddl::fuzz
