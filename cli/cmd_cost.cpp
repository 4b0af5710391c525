// `autoddl cost`: the analytical cost of one scheme (expert or scheme JSON) for a model on a
// cluster: a readable breakdown and, with --json, the CostReport JSON (docs/reports.md, "CostReport").
// `--sync FILE` also prices the scheme with its data-parallel gradient sync replaced by a sync
// strategy (sync/scheme_sync.hpp).
#include <algorithm>
#include <cstdio>
#include <optional>

#include "autoddl/costmodel/calibration.hpp"
#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/graph_json.hpp"
#include "autoddl/costmodel/iteration_plan_json.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/mesh.hpp"
#include "autoddl/costmodel/output_files.hpp"
#include "autoddl/costmodel/scheme_json.hpp"
#ifdef AUTODDL_HAVE_SYNC
#include "autoddl/sync/scheme_sync.hpp"
#include "autoddl/sync/strategy_json.hpp"
#endif
#include "cli_util.hpp"
#include "coverage_report.hpp"
#include "commands.hpp"
#include "validation_band.hpp"

namespace autoddl::cli {
namespace {

struct CostOptions {
  std::string model, knobs, cluster, mesh, scheme, json_file, scheme_out, sync_file, plan_json, graph_json;
  std::optional<int> nodes;
  int top = 10;
};

void print_report(const costmodel::CostReport& r, const costmodel::Graph& g, const costmodel::Scheme& scheme,
                  const BandLookup& band, int top) {
  using namespace costmodel;
  std::printf("autoddl cost: %s (%s params, batch %lld) on %s, %d GPUs, mesh %s\n", r.model.c_str(),
              human_count(r.params).c_str(), static_cast<long long>(g.batch), r.cluster.c_str(), r.devices,
              r.mesh.c_str());
  std::printf("scheme %s: %d stage%s, %d micro-batch%s\n\n", r.scheme.c_str(), r.stages, r.stages == 1 ? "" : "s",
              r.micro_batches, r.micro_batches == 1 ? "" : "es");
  std::printf("  iteration        %12s   %.1f samples/s, %.1f model TFLOP/s per GPU\n", human_seconds(r.iteration_s).c_str(),
              r.samples_per_s, r.model_tflops_per_gpu);
  std::printf("  compute          %12s\n", human_seconds(r.compute_s).c_str());
  std::printf("  exposed comm     %12s   fwd boxing %s, bwd boxing %s, send/recv %s, grad sync %s exposed of %s\n",
              human_seconds(r.comm_exposed_s).c_str(), human_seconds(r.fwd_boxing_s).c_str(),
              human_seconds(r.bwd_boxing_s).c_str(), human_seconds(r.send_recv_s).c_str(),
              human_seconds(r.grad_sync_exposed_s).c_str(), human_seconds(r.grad_sync_s).c_str());
  if (r.all_to_all_exposed_s > 0) {
    const auto a2a = static_cast<size_t>(CollectiveKind::all_to_all);
    std::printf("    all-to-all     %12s   expert dispatch and combine (%.0f per device, %s sent), in the boxing above;"
                " not overlapped\n",
                human_seconds(r.all_to_all_exposed_s).c_str(), r.comm.count[a2a],
                (human_count(r.comm.bytes[a2a]) + "B").c_str());
  }
  if (r.context_parallel_s > 0) {
    std::printf("    context par.   %12s   exposed of %s: the KV exchange of sequence-split attention (in the boxing above), %s\n",
                human_seconds(r.context_parallel_exposed_s).c_str(), human_seconds(r.context_parallel_s).c_str(),
                scheme.overlap_cp_comm ? "the rest hidden under attention by the p2p ring"
                                       : "not overlapped (cp_comm_type all_gather)");
  }
  std::printf("  pipeline bubble  %12s\n", human_seconds(r.bubble_s).c_str());
  std::printf("  memory           %9.2f GB   of %.1f GB (parameters+gradients+optimizer %.2f GB, activations %.2f GB)\n",
              r.peak_memory_bytes / 1e9, r.memory_capacity_bytes / 1e9, r.param_memory_bytes / 1e9,
              r.activation_memory_bytes / 1e9);
  std::printf("  memory margin    %9.2f GB   %s\n", (r.memory_capacity_bytes - r.peak_memory_bytes) / 1e9,
              memory_reserve_words(r).c_str());
  std::printf("  gradients        kept in %s, reduced in %s\n", r.grad_dtype.c_str(), r.grad_reduce_dtype.c_str());
  std::printf("  feasible         %12s%s%s\n", r.feasible ? "yes" : "NO", r.feasible ? "" : "   ", r.infeasible_reason.c_str());
  std::printf("  validation band  %s\n\n", band_line(band).c_str());
  std::printf("  communication per device and iteration:\n");
  std::printf("    %-15s %8s %12s %12s\n", "kind", "count", "bytes", "time");
  for (const CollectiveInfo& k : collective_kinds()) {
    auto i = static_cast<size_t>(k.kind);
    if (r.comm.count[i] == 0) continue;
    std::printf("    %-15s %8.0f %12s %12s\n", std::string(k.name).c_str(), r.comm.count[i],
                (human_count(r.comm.bytes[i]) + "B").c_str(), human_seconds(r.comm.time_s[i]).c_str());
  }
  std::vector<const OpCostRow*> rows;
  for (const OpCostRow& o : r.per_op) rows.push_back(&o);
  std::sort(rows.begin(), rows.end(), [](const OpCostRow* a, const OpCostRow* b) {
    return a->compute_s + a->boxing_s + a->grad_sync_s > b->compute_s + b->boxing_s + b->grad_sync_s;
  });
  if (top > 0) {
    std::printf("\n  top %d ops (per iteration):\n    %-32s %10s %10s %10s  %s\n", top, "op", "compute", "boxing",
                "grad sync", "signature");
    for (int i = 0; i < top && i < static_cast<int>(rows.size()); ++i) {
      const OpCostRow& o = *rows[i];
      std::printf("    %-32s %10s %10s %10s  %s\n", o.op.c_str(), human_seconds(o.compute_s).c_str(),
                  human_seconds(o.boxing_s).c_str(), human_seconds(o.grad_sync_s).c_str(), o.signature.c_str());
    }
  }
}

// With a calibrated cluster: per mesh dim, the all-reduce of 1 GiB (nccl-tests size) and where
// its time comes from (measured with this group shape, NCCL's model with the fitted NCCL-model
// tier, the fitted link tier, or the cluster's own model), so a user sees which dims the
// calibration covers. Also stored in --json's "mesh_dims".
nlohmann::json mesh_dims_report(const costmodel::ClusterSpec& c, const std::vector<int>& shape) {
  using namespace costmodel;
  nlohmann::json dims = nlohmann::json::array();
  if (!c.calibration) return dims;
  const DeviceMesh mesh = make_mesh(c, shape);
  const double bytes = 1 << 30;
  std::printf("\n  mesh dims (calibration %s), all_reduce of 1 GiB:\n", c.calibration_file.c_str());
  for (int d = 0; d < mesh.ndims(); ++d) {
    const MeshDim& m = mesh.dims[d];
    const CalibrationMatch how = mesh.calibration_match(d, CollectiveKind::all_reduce);
    const double t = mesh.collective_time_s(d, CollectiveKind::all_reduce, bytes);
    const char* source = how == CalibrationMatch::measured     ? "measured"
                         : how == CalibrationMatch::nccl_model ? "nccl-model fit"
                         : how == CalibrationMatch::link_tier  ? "link-tier fit"
                                                               : "cluster model";
    std::printf("    dim %d: %d ranks, %d per node, %d groups per node%s  %12s  %s\n", d, m.size,
                m.ranks_per_node, m.groups_per_node, m.crosses_nodes ? ", across nodes" : ", inside a node",
                human_seconds(t).c_str(), source);
    dims.push_back({{"size", m.size},
                    {"ranks_per_node", m.ranks_per_node},
                    {"groups_per_node", m.groups_per_node},
                    {"crosses_nodes", m.crosses_nodes},
                    {"all_reduce_1GiB_s", t},
                    {"source", source}});
  }
  return dims;
}

#ifdef AUTODDL_HAVE_SYNC
// The scheme with its data-parallel gradient sync replaced by the strategy in `file`: the
// strategy is loaded and checked against the scheme's variables before anything is printed.
struct WithStrategy {
  sync::DataParallelSync dp;
  sync::Strategy strategy;
  sync::SchemeSyncCost cost;
};

WithStrategy cost_with_strategy_file(const costmodel::SchemedModel& m, const costmodel::ClusterSpec& c,
                                     const costmodel::CostReport& r, const costmodel::IterationPlan& plan,
                                     const std::string& file) {
  WithStrategy w{sync::data_parallel_sync(m.graph, c, m.scheme, plan), {}, {}};
  w.strategy = sync::load_strategy_file(file, w.dp.vars, w.dp.cluster);
  w.cost = sync::cost_with_strategy(r, w.dp, w.strategy);
  return w;
}

void print_with_strategy(const WithStrategy& w, const std::string& file) {
  const sync::Evaluation& e = w.cost.strategy;
  std::printf("\n  gradient sync replaced by %s (strategy %s), over the data-parallel group: %d ranks on %d node%s"
              " (%d per node, %d group%s per node)\n",
              file.c_str(), w.strategy.id.empty() ? "-" : w.strategy.id.c_str(), w.dp.ranks, w.dp.nodes,
              w.dp.nodes == 1 ? "" : "s", w.dp.ranks_per_node, w.dp.groups_per_node,
              w.dp.groups_per_node == 1 ? "" : "s");
  std::printf("    %-14s %12s %12s\n", "", "exposed sync", "iteration");
  std::printf("    %-14s %12s %12s   buckets back to back %s\n", "DDP buckets", human_seconds(w.cost.ddp_exposed_s).c_str(),
              human_seconds(w.cost.ddp_iteration_s).c_str(), human_seconds(w.cost.ddp_sync_s).c_str());
  std::printf("    %-14s %12s %12s   %.2fx; PS max %s, PS sum %s, AR max %s, AR sum %s; %zu servers, %zu groups\n",
              "strategy", human_seconds(e.exposed_sync_s).c_str(), human_seconds(w.cost.iteration_s).c_str(),
              w.cost.ddp_iteration_s / w.cost.iteration_s, human_seconds(e.ps_max_s).c_str(),
              human_seconds(e.ps_sum_s).c_str(), human_seconds(e.ar_max_s).c_str(), human_seconds(e.ar_sum_s).c_str(),
              e.servers.size(), e.groups.size());
  if (w.cost.stages.size() > 1) {
    std::string per_stage;
    for (size_t st = 0; st < w.cost.stages.size(); ++st)
      per_stage += (st ? ", " : "") + human_seconds(w.cost.stages[st].exposed_sync_s);
    std::printf("    each stage's group syncs its own variables; exposed per stage %s: stage %d sets the iteration\n",
                per_stage.c_str(), w.cost.slowest_stage);
  }
}
#endif

int run_cost(const CostOptions& opt) {
  using namespace costmodel;
  ClusterSpec c = resolve_cluster(opt.cluster, opt.nodes);
  SchemedModel m = load_schemed_model(opt.model, opt.knobs, opt.scheme, c, opt.mesh);
  IterationPlan plan;
  // The plan is read by --sync, --plan-json and, on a calibrated cluster, the coverage table.
  const bool want_plan = !opt.sync_file.empty() || !opt.plan_json.empty() || c.calibration;
  CostReport r = evaluate(m.graph, c, m.scheme, want_plan ? &plan : nullptr);
#ifdef AUTODDL_HAVE_SYNC
  std::optional<WithStrategy> with;
  if (!opt.sync_file.empty()) with = cost_with_strategy_file(m, c, r, plan, opt.sync_file);
#else
  if (!opt.sync_file.empty()) throw InputError("--sync", "", "this autoddl was built without sync/");
#endif
  restate_for_given_model(r, m);
  const BandLookup band = validation_band(c, m.graph, r);
  print_report(r, m.graph, m.scheme, band, opt.top);
#ifdef AUTODDL_HAVE_SYNC
  if (with) print_with_strategy(*with, opt.sync_file);
#endif
  const nlohmann::json dims = mesh_dims_report(c, m.scheme.mesh_shape);
  const nlohmann::json coverage =
      c.calibration ? print_calibration_coverage(plan, c.calibration_file) : nlohmann::json::array();
  OutputFiles out;
  if (!opt.json_file.empty()) {
    nlohmann::json j = to_json(r);
    if (!dims.empty()) j["mesh_dims"] = dims;
    if (c.calibration) j["calibration_coverage"] = coverage;
    j["validation_band"] = band_json(band);
#ifdef AUTODDL_HAVE_SYNC
    if (with) {
      j["sync"] = sync::scheme_sync_to_json(with->dp, with->cost);
      j["sync"]["file"] = opt.sync_file;
      j["sync"]["strategy_id"] = with->strategy.id;
    }
#endif
    j["notes"] = m.note.empty() ? nlohmann::json::array() : nlohmann::json::array({m.note});
    out.add_json(opt.json_file, j);
  }
  if (!opt.scheme_out.empty()) out.add_json(opt.scheme_out, scheme_to_json(m.scheme, m.graph));
  if (!opt.plan_json.empty()) out.add_json(opt.plan_json, plan_to_json(m.graph, m.scheme, plan));
  if (!opt.graph_json.empty()) out.add_json(opt.graph_json, graph_to_json(m.graph));
  out.commit();
  return 0;
}

}  // namespace

RunFn setup_cost(CLI::App& sub) {
  auto opt = std::make_shared<CostOptions>();
  add_model_options(sub, opt->model, opt->knobs);
  add_cluster_options(sub, opt->cluster, opt->nodes, &opt->mesh);
  add_scheme_option(sub, opt->scheme);
  sub.add_option("--json", opt->json_file, "Write the CostReport JSON to FILE");
  sub.add_option("--out", opt->scheme_out, "Write the lowered scheme as scheme JSON to FILE");
  sub.add_option("--plan-json", opt->plan_json,
                 "Write the iteration plan (per op input its boxing routes and collective steps, the gradient-sync "
                 "buckets) as JSON to FILE (docs/scheme-json.md, \"Plan JSON\")");
  sub.add_option("--graph-json", opt->graph_json, "Write the model's graph as graph JSON to FILE (docs/graph-json.md)");
  sub.add_option("--top", opt->top, "Show the N most expensive ops")->capture_default_str()->check(integer_at_least(0));
  sub.add_option("--sync", opt->sync_file,
                 "Also price the scheme with its data-parallel gradient sync replaced by this sync strategy "
                 "(JSON, as `autoddl sync build` writes)");
  return [opt] { return run_cost(*opt); };
}

}  // namespace autoddl::cli
