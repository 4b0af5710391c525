// `autoddl fit`: nccl-tests logs and/or our microbenchmarks' result files in, a calibration
// JSON out (written atomically), with the fit table printed: per collective and group the α-β
// bands, their R², worst error and error on held-out sizes. Glue only; the work is in calib/.
#include <fstream>
#include <iostream>
#include <memory>

#include "autoddl/calib/fit.hpp"
#include "autoddl/costmodel/calibration.hpp"
#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/cost_model.hpp"
#include "cli_util.hpp"
#include "coverage_report.hpp"
#include "commands.hpp"

namespace autoddl::cli {

namespace {

struct FitArgs {
  std::vector<std::string> nccl_tests;
  std::string collective;
  std::string nccl_algo, nccl_proto;  // the logs' NCCL_ALGO / NCCL_PROTO
  bool nccl_per_protocol = false;
  int ranks = 0;           // 0: from each log's rank lines
  int ranks_per_node = 0;  // 0: --ranks (one node)
  std::vector<std::string> measurements;
  std::string out;
  int holdout = 4;
  int max_bands = 3;
  double band_tolerance = 0.05;
  std::string peak;
  std::string cluster;
  bool no_tables = false;
  // A plan to check the fitted calibration against (--scheme with --model, --cluster).
  std::string model, knobs, scheme, mesh;
  std::optional<int> nodes;
};

// "bf16=989e12,fp16=989e12" -> {bf16: 989e12, fp16: 989e12}.
std::map<costmodel::DType, double> parse_peaks(const std::string& text) {
  std::map<costmodel::DType, double> out;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find(',', i);
    if (j == std::string::npos) j = text.size();
    std::string item = text.substr(i, j - i);
    size_t eq = item.find('=');
    costmodel::DType t;
    if (eq == std::string::npos || !costmodel::parse_dtype(item.substr(0, eq), t)) {
      throw InputError("--peak", item, "expected dtype=FLOP/s, e.g. bf16=989e12");
    }
    // The cluster file's range for a peak (docs/cluster-json.md): strtod took "inf" and 1e400.
    double v = 0;
    if (!parses_whole(item.substr(eq + 1), v) || !(v >= 1e3 && v <= 1e21)) {
      throw InputError("--peak", item, "the peak must be a number of FLOP/s in [1e3, 1e21]");
    }
    out[t] = v;
    i = j + 1;
  }
  return out;
}

std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string out;
  for (char c : all) out += c == '\0' ? ' ' : c;
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out.empty() ? "autoddl fit" : out;
}

// Which collectives of the plan (--model, --scheme on --cluster) the fitted calibration measured.
void print_plan_coverage(const FitArgs& a, const costmodel::Calibration& cal) {
  costmodel::ClusterSpec c = costmodel::resolve_cluster(a.cluster, a.nodes);
  costmodel::attach_calibration(c, std::make_shared<const costmodel::Calibration>(cal), a.out);
  costmodel::SchemedModel m = load_schemed_model(a.model, a.knobs, a.scheme, c, a.mesh);
  costmodel::IterationPlan plan;
  costmodel::evaluate(m.graph, c, m.scheme, &plan);
  std::printf("\nplan: %s on %s, mesh %s\n", m.scheme.name.c_str(), c.name.c_str(), plan.mesh.shape_string().c_str());
  print_calibration_coverage(plan, a.out);
}

int run_fit(const FitArgs& a) {
  if (a.nccl_tests.empty() && a.measurements.empty()) {
    throw InputError("--nccl-tests", "", "nothing to fit: give nccl-tests logs or --measurements files");
  }
  if (a.holdout == 1 || a.holdout < 0) throw InputError("--holdout", "", "must be 0 (off) or >= 2");
  if (a.max_bands < 1) throw InputError("--max-bands", "", "must be >= 1");

  std::optional<costmodel::CollectiveKind> kind;
  if (!a.collective.empty()) {
    const costmodel::CollectiveInfo* info = costmodel::find_collective(a.collective);
    if (!info) info = calib::collective_of_nccl_tests_program(a.collective);
    if (!info) throw InputError("--collective", a.collective, "unknown collective");
    kind = info->kind;
  }
  std::optional<costmodel::CommGroup> group;
  if (a.ranks_per_node > 0 && a.ranks == 0) throw InputError("--ranks-per-node", "", "needs --ranks");
  if (a.ranks > 0) {
    group = costmodel::CommGroup{a.ranks, a.ranks_per_node > 0 ? a.ranks_per_node : a.ranks};
    if (group->ranks_per_node > group->ranks || group->ranks % group->ranks_per_node != 0) {
      throw InputError("--ranks-per-node", std::to_string(group->ranks_per_node),
                       "must divide --ranks (" + std::to_string(group->ranks) + ")");
    }
  }
  std::vector<calib::NcclTestsRun> runs;
  for (const std::string& f : a.nccl_tests) {
    auto r = calib::load_nccl_tests_file(f, kind, group);
    runs.insert(runs.end(), r.begin(), r.end());
  }
  std::vector<calib::MeasurementFile> files;
  for (const std::string& f : a.measurements) {
    std::string why_not;
    if (auto m = calib::load_measurement_file_if_any(f, why_not)) {
      files.push_back(std::move(*m));
    } else {
      std::fprintf(stderr, "autoddl fit: note: skipping %s: %s\n", safe_text(f).c_str(), safe_text(why_not).c_str());
    }
  }
  if (runs.empty() && files.empty()) {
    throw InputError("--measurements", "", "nothing to fit: none of the files is a measurement file");
  }

  calib::FitOptions opt;
  opt.bands.holdout_every = a.holdout;
  opt.bands.max_bands = a.max_bands;
  opt.bands.tolerance = a.band_tolerance;
  opt.keep_measured = !a.no_tables;
  opt.command = command_line();
  if (!a.cluster.empty()) {
    costmodel::ClusterSpec c = costmodel::resolve_cluster(a.cluster);
    for (costmodel::DType t : {costmodel::DType::fp32, costmodel::DType::fp16, costmodel::DType::bf16,
                               costmodel::DType::fp8}) {
      if (c.gpu.peak_flops(t) > 0) opt.peak_flops_per_s[t] = c.gpu.peak_flops(t);
    }
    opt.peak_source = "cluster " + a.cluster;
    opt.nccl_cluster = std::move(c);
  }
  opt.nccl_only = parse_nccl_restriction(a.nccl_algo, a.nccl_proto);
  opt.nccl_per_protocol = a.nccl_per_protocol;
  if (a.nccl_per_protocol && !opt.nccl_cluster) {
    throw InputError("--nccl-per-protocol", "", "fits NCCL's model, which is fitted only with --cluster");
  }
  if (opt.nccl_only.any() && !opt.nccl_cluster) {
    throw InputError(opt.nccl_only.option(), "",
                     "says how the logs were run for NCCL's model, which is fitted only with --cluster");
  }
  if (!a.peak.empty()) {
    for (auto [t, v] : parse_peaks(a.peak)) opt.peak_flops_per_s[t] = v;
    opt.peak_source = a.cluster.empty() ? "--peak" : "--peak / cluster " + a.cluster;
  }

  if (!a.scheme.empty() && (a.model.empty() || a.cluster.empty()))
    throw InputError("--scheme", a.scheme, "checks a plan on the fitted cluster: give --model and --cluster too");
  if (a.scheme.empty() && (!a.model.empty() || !a.knobs.empty() || !a.mesh.empty() || a.nodes))
    throw InputError(!a.model.empty() ? "--model" : !a.knobs.empty() ? "--set" : !a.mesh.empty() ? "--mesh" : "--nodes",
                     "", "describes the plan that --scheme names; give --scheme too");

  calib::FitResult r = calib::fit_calibration(runs, files, opt);
  // Never write a calibration that our own loader would reject (an infinite peak, a time that
  // JSON cannot hold): read the text back first, and report the field that fails.
  try {
    costmodel::calibration_from_json(parse_json_text(dump_json(costmodel::calibration_to_json(r.calibration)), a.out),
                                     a.out);
  } catch (const InputError& e) {
    throw InputError("--out", e.field(), "the fit gives a calibration its loader rejects: " + e.reason());
  }
  std::cout << calib::format_fit_report(r);
  std::cout << calib::fit_report_legend(r);
  // The plan's coverage is printed before the file is written, so a bad --scheme leaves none.
  if (!a.scheme.empty()) print_plan_coverage(a, r.calibration);
  costmodel::save_calibration_file(a.out, r.calibration);
  std::cout << "wrote " << a.out << "\n";
  return 0;
}

}  // namespace

RunFn setup_fit(CLI::App& sub) {
  auto a = std::make_shared<FitArgs>();
  sub.add_option("--nccl-tests", a->nccl_tests,
                 "nccl-tests stdout logs (all_reduce_perf, all_gather_perf, reduce_scatter_perf, "
                 "alltoall_perf, sendrecv_perf)");
  sub.add_option("--collective", a->collective,
                 "the collective of logs that do not name their program (all_reduce, ...)");
  sub.add_option("--ranks", a->ranks,
                 "ranks of the logs' runs, for tables pasted without their '#  Rank' lines (checked against "
                 "logs that have them)")
      ->check(integer_at_least(1));
  sub.add_option("--ranks-per-node", a->ranks_per_node, "ranks per node of those runs (default: --ranks, one node)")
      ->check(integer_at_least(1));
  sub.add_option("--nccl-algo", a->nccl_algo,
                 "the NCCL_ALGO the logs were run with (ring, tree, nvls, nvls_tree, pat): NCCL's model is fitted "
                 "choosing only among its protocols");
  sub.add_option("--nccl-proto", a->nccl_proto, "the NCCL_PROTO the logs were run with (LL, LL128, Simple)");
  sub.add_flag("--nccl-per-protocol", a->nccl_per_protocol,
               "fit NCCL's model with its own bandwidth efficiency and latency offset per protocol (LL, LL128, "
               "Simple) where a tier has at least two sizes of it");
  sub.add_option("--measurements", a->measurements,
                 "result JSON files of autoddl's GPU microbenchmarks (autoddl calibrate)");
  sub.add_option("--out", a->out, "calibration JSON to write")->required();
  sub.add_option("--holdout", a->holdout,
                 "hold out every K-th size / shape to report held-out error (0 = off)")
      ->capture_default_str();
  sub.add_option("--max-bands", a->max_bands, "α-β size bands per collective and group, at most")
      ->capture_default_str();
  sub.add_option("--band-tolerance", a->band_tolerance,
                 "add bands only while some size is off by more than this (relative)")
      ->capture_default_str()
      ->check(finite_at_least(0));
  sub.add_option("--peak", a->peak,
                 "reference peak FLOP/s for kernel efficiencies, e.g. bf16=989e12,fp32=67e12");
  sub.add_option("--cluster", a->cluster, "the cluster measured (preset or file): reference peaks from its GPU, and NCCL's model "
                 "fitted against its nccl block");
  sub.add_flag("--no-measured-tables", a->no_tables,
               "store only the α-β bands, not the measured (bytes, time) tables");
  sub.add_option("--scheme", a->scheme,
                 "also list which collectives of this scheme (with --model, --cluster) the fit measured: "
                 "group shape, sizes, and measured / fitted from other shapes / cluster model");
  sub.add_option("--model", a->model, "the model of --scheme (zoo name or graph JSON)");
  sub.add_option("--set", a->knobs, "model knobs of --model");
  sub.add_option("--nodes", a->nodes, "nodes of --cluster for the --scheme plan")->check(integer_at_least(1));
  sub.add_option("--mesh", a->mesh, "device mesh of the --scheme plan (default: the scheme's)");
  sub.footer(
      "Example: autoddl fit --nccl-tests all_reduce_perf.txt all_gather_perf.txt "
      "--measurements calib-out/*.json --peak bf16=989e12 --out calibration.json");
  return [a] { return run_fit(*a); };
}

}  // namespace autoddl::cli
