// `autoddl simulate`: one training iteration of a scheme simulated with SimGrid (sim/): the
// scheme is lowered to per-device programs, run on the modeled cluster, and compared with the
// analytical model: a readable summary, the SimReport JSON (--json) and a Chrome trace that
// opens in Perfetto (--trace). Built only with sim/ (AUTODDL_HAVE_SIM).
#ifdef AUTODDL_HAVE_SIM
#include <cstdio>
#include <optional>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/mesh.hpp"
#include "autoddl/costmodel/output_files.hpp"
#include "autoddl/sim/report.hpp"
#include "autoddl/sim/trace.hpp"
#ifdef AUTODDL_HAVE_SYNC
#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/sync/scheme_sim.hpp"
#include "autoddl/sync/strategy_json.hpp"
#endif
#include "cli_util.hpp"
#include "commands.hpp"
#include "validation_band.hpp"

namespace autoddl::cli {
namespace {

struct SimulateOptions {
  std::string model, knobs, cluster, mesh, scheme, fidelity = "step", json_file, trace_file, sync_file;
  std::string fold = "auto", merge = "auto";
  std::optional<int> nodes;
};

// `params`: of the model as given (without heads padded for an uneven tensor-parallel split).
void print_report(const sim::SimReport& r, const sim::LoweredProgram& lowered, double params,
                  const costmodel::Graph& g) {
  std::printf("autoddl simulate: %s (%s params, batch %lld) on %s, %d GPUs, mesh %s\n", r.model.c_str(),
              human_count(params).c_str(), static_cast<long long>(g.batch), r.cluster.c_str(),
              r.devices, r.mesh.c_str());
  std::printf("scheme %s: %d stage%s, %d micro-batch%s; %s fidelity\n", r.scheme.c_str(), r.stages,
              r.stages == 1 ? "" : "s", r.micro_batches, r.micro_batches == 1 ? "" : "es", r.fidelity.c_str());
  std::printf("program: %lld tasks, %s compute tasks, %d computing device%s", static_cast<long long>(r.tasks),
              r.merged_compute ? "merged" : "per-op", r.computing_devices, r.computing_devices == 1 ? "" : "s");
  if (r.replicas_folded > 1) std::printf(" (each stands for %d data-parallel replicas)", r.replicas_folded);
  std::printf("\n");
  if (!lowered.analytical.feasible) std::printf("note: infeasible: %s\n", lowered.analytical.infeasible_reason.c_str());
  std::printf("\n");
  const double rel = r.relative_difference * 100;
  std::printf("  %-22s %12s %12s\n", "", "simulated", "analytical");
  std::printf("  %-22s %12s %12s   %+.1f%%\n", "iteration", human_seconds(r.iteration_s).c_str(),
              human_seconds(r.analytical_iteration_s).c_str(), rel);
  std::printf("  on device %d (the least idle):\n", r.critical_device);
  for (const sim::ReportPart& p : r.breakdown) {
    std::string label = p.name == "compute" ? "compute" : p.name == "bubble" ? "idle (bubble)" : p.name + " exposed";
    std::printf("    %-20s %12s %12s\n", label.c_str(), human_seconds(p.simulated_s).c_str(),
                human_seconds(p.analytical_s).c_str());
  }
  std::printf("  max over devices: compute %s, communication %s, exposed %s\n", human_seconds(r.compute_s).c_str(),
              human_seconds(r.comm_s).c_str(), human_seconds(r.exposed_comm_s).c_str());
  if (!r.overlaps.empty()) {
    std::printf("\n  hidden under compute on device %d:\n", r.critical_device);
    for (const sim::OverlapUse& u : r.overlaps) {
      std::printf("    %-20s %12s %12s\n", u.name.c_str(), human_seconds(u.simulated_hidden_s).c_str(),
                  human_seconds(u.analytical_hidden_s).c_str());
    }
  }
  if (!r.collectives.empty()) {
    std::printf("\n  collectives on device %d:\n    %-10s %-15s %8s %12s %12s %8s\n", r.critical_device, "phase",
                "kind", "count", "simulated", "alpha-beta", "ratio");
    for (const sim::CollectiveUse& u : r.collectives) {
      std::printf("    %-10s %-15s %8lld %12s %12s %7.2fx\n", std::string(sim::phase_name(u.phase)).c_str(),
                  std::string(costmodel::collective_info(u.kind).name).c_str(), static_cast<long long>(u.count),
                  human_seconds(u.simulated_s).c_str(), human_seconds(u.alpha_beta_s).c_str(),
                  u.alpha_beta_s > 0 ? u.simulated_s / u.alpha_beta_s : 1.0);
    }
  }
  if (!r.busiest_links.empty()) {
    std::printf("\n  busiest links:\n    %-28s %12s %12s %6s\n", "link", "bytes", "GB/s", "busy");
    for (size_t i = 0; i < r.busiest_links.size() && i < 5; ++i) {
      const sim::LinkUse& l = r.busiest_links[i];
      std::printf("    %-28s %12s %12.1f %5.1f%%\n", l.name.c_str(), (human_count(l.bytes) + "B").c_str(),
                  l.bw_bytes_per_s / 1e9, l.utilization * 100);
    }
  }
  std::printf("\n  simulation: %s events in %.3f s wall (%s events/s); lowering %.3f s\n",
              human_count(static_cast<double>(r.events)).c_str(), r.wall_s,
              human_count(r.wall_s > 0 ? static_cast<double>(r.events) / r.wall_s : 0).c_str(), r.lowering_wall_s);
  if (!r.discrepancy.empty()) std::printf("  discrepancy: %s\n", r.discrepancy.c_str());
}

sim::LoweringMode mode(const std::string& text, const std::string& flag) {
  sim::LoweringMode m;
  if (!sim::parse_lowering_mode(text, m)) throw InputError(flag, "", "must be auto, on or off (got '" + text + "')");
  return m;
}

#ifdef AUTODDL_HAVE_SYNC
// --sync FILE: the scheme's gradient sync replaced by the strategy (sync/scheme_sim.hpp); the
// strategy is loaded and checked against the scheme's data-parallel group before any output.
int run_simulate_with_strategy(const SimulateOptions& opt, const costmodel::ClusterSpec& c,
                               const costmodel::SchemedModel& m, const sim::SimOptions& so,
                               const sim::LoweringOptions& lo) {
  costmodel::IterationPlan plan;
  costmodel::evaluate(m.graph, c, m.scheme, &plan);
  const sync::DataParallelSync dp = sync::data_parallel_sync(m.graph, c, m.scheme, plan);
  const sync::Strategy strategy = sync::load_strategy_file(opt.sync_file, dp.vars, dp.cluster);
  sync::SchemeSyncSimulation run = sync::simulate_scheme_with_strategy(m.graph, c, m.scheme, plan, dp, strategy, so, lo);
  print_report(run.report, run.lowered, m.params, m.graph);
  std::printf("\n  gradient sync replaced by %s (strategy %s), over the data-parallel group: %d ranks on %d node%s"
              " (%d per node, %d group%s per node); %lld transfers in all groups\n",
              opt.sync_file.c_str(), strategy.id.empty() ? "-" : strategy.id.c_str(), dp.ranks, dp.nodes,
              dp.nodes == 1 ? "" : "s", dp.ranks_per_node, dp.groups_per_node, dp.groups_per_node == 1 ? "" : "s",
              static_cast<long long>(run.transfers));
  std::printf("  analytical (autoddl cost --sync): %s per iteration with the strategy, %s with DDP buckets\n",
              human_seconds(run.cost.iteration_s).c_str(), human_seconds(run.cost.ddp_iteration_s).c_str());
  if (!opt.json_file.empty()) {
    nlohmann::json j = sim::sim_report_to_json(run.report);
    j["sync"] = sync::scheme_sync_to_json(dp, run.cost);
    j["sync"]["file"] = opt.sync_file;
    j["sync"]["strategy_id"] = strategy.id;
    j["sync"]["transfers"] = run.transfers;
    write_json_atomic(opt.json_file, j);
  }
  if (!opt.trace_file.empty()) {
    sim::write_trace(opt.trace_file, run.lowered.program, run.result, c);
    std::printf("wrote %s (open it in https://ui.perfetto.dev)\n", opt.trace_file.c_str());
  }
  return 0;
}
#endif

int run_simulate(const SimulateOptions& opt) {
  using namespace costmodel;
  sim::SimOptions so;
  if (!sim::parse_fidelity(opt.fidelity, so.fidelity)) {
    throw InputError("--fidelity", "", "must be step or flow (got '" + opt.fidelity + "')");
  }
  sim::LoweringOptions lo;
  lo.fold_replicas = mode(opt.fold, "--fold-replicas");
  lo.merge_compute = mode(opt.merge, "--merge-compute");
  ClusterSpec c = resolve_cluster(opt.cluster, opt.nodes);
  SchemedModel m = load_schemed_model(opt.model, opt.knobs, opt.scheme, c, opt.mesh);
#ifdef AUTODDL_HAVE_SYNC
  if (!opt.sync_file.empty()) return run_simulate_with_strategy(opt, c, m, so, lo);
#else
  if (!opt.sync_file.empty()) throw InputError("--sync", "", "this autoddl was built without sync/");
#endif
  const Graph& g = m.graph;
  const Scheme& s = m.scheme;
  sim::SchemeSimulation run = sim::simulate_scheme(g, c, s, so, lo);
  print_report(run.report, run.lowered, m.params, g);
  // The band measures the analytical model against published steps; the simulator is compared
  // with that model above, not with the published tables.
  const BandLookup band = validation_band(c, g, run.lowered.analytical);
  std::printf("  validation band of the analytical model: %s\n", band_line(band).c_str());
  OutputFiles out;
  if (!opt.json_file.empty()) {
    nlohmann::json j = sim::sim_report_to_json(run.report);
    j["validation_band"] = band_json(band);
    out.add_json(opt.json_file, j);
  }
  if (!opt.trace_file.empty()) {
    out.add(opt.trace_file, dump_json(traces::chrome_trace_json(sim::to_chrome_trace(run.lowered.program, run.result, c))) + "\n");
  }
  out.commit();
  if (!opt.trace_file.empty()) {
    std::printf("wrote %s (open it in https://ui.perfetto.dev)\n", opt.trace_file.c_str());
  }
  return 0;
}

}  // namespace

RunFn setup_simulate(CLI::App& sub) {
  auto opt = std::make_shared<SimulateOptions>();
  add_model_options(sub, opt->model, opt->knobs);
  add_cluster_options(sub, opt->cluster, opt->nodes, &opt->mesh);
  add_scheme_option(sub, opt->scheme);
  sub.add_option("--fidelity", opt->fidelity,
                 "step: every ring step is its own round of flows (accurate under contention); flow: one flow "
                 "per rank and collective phase (same uncontended, far fewer events)")
      ->capture_default_str();
  sub.add_option("--fold-replicas", opt->fold,
                 "auto | on | off: data-parallel replicas on other nodes: simulate replica 0 in full, the others "
                 "only in the collectives that span them, e.g. gradient sync (auto: for large programs)")
      ->capture_default_str();
  sub.add_option("--merge-compute", opt->merge,
                 "auto | on | off: one compute task per run of ops between communications (same timing; auto: "
                 "for large programs)")
      ->capture_default_str();
  sub.add_option("--json", opt->json_file, "Write the SimReport JSON to FILE");
  sub.add_option("--trace", opt->trace_file, "Write a Chrome trace (Perfetto) of the iteration to FILE");
  sub.add_option("--sync", opt->sync_file,
                 "Replace the scheme's data-parallel gradient sync (DDP buckets) with the sync strategy in FILE "
                 "(docs/sync-strategy-json.md); compared with `autoddl cost --sync`");
  sub.footer("The simulated iteration is compared with `autoddl cost` of the same scheme; a difference over 10% "
             "is explained in the report's discrepancy (contended links or the part that differs).");
  return [opt] { return run_simulate(*opt); };
}

}  // namespace autoddl::cli
#endif  // AUTODDL_HAVE_SIM
