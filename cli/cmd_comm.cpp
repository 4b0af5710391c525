// `autoddl comm`: a collective's time over a size sweep, printed in nccl-tests' table shape
// (size, count, type, redop, time, algbw, busbw) from the α-β model of costmodel/collective,
// with nccl-tests' busbw factors. Ranks are consecutive GPUs; beyond one node they span nodes.
// With --sim the times come from the SimGrid simulator instead (sim/, one simulation per table).
#include <cmath>
#include <cstdio>
#include <optional>
#include <vector>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/collective.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/nccl_model.hpp"
#ifdef AUTODDL_HAVE_SIM
#include "autoddl/sim/simulate.hpp"
#endif
#include "cli_util.hpp"
#include "commands.hpp"

namespace autoddl::cli {
namespace {

struct CommOptions {
  std::string cluster;
  std::optional<int> nodes;
  std::string op = "all_reduce";
  int ranks = 0;
  std::string min = "8", max = "8G";
  double factor = 2;
  std::string json_file;
  bool sim = false;
  std::string fidelity = "step";
  std::string model = "auto";
  std::string nccl_algo, nccl_proto;  // as NCCL_ALGO / NCCL_PROTO: restrict NCCL's choice
};

struct CommRow {
  int64_t bytes;
  double time_s;
  costmodel::CollectiveAlgo algo;
  std::string_view protocol;  // NCCL's protocol, empty for α-β and the simulator
};

constexpr int kMaxRows = 10000;

// A time that is not a finite number >= 0 comes from a cluster whose numbers are too extreme to
// model (a latency of 1e300 s, a bandwidth of 1e-300 B/s): say so instead of printing nan/inf.
void check_time(const CommRow& r, const std::string& cluster) {
  if (!std::isfinite(r.time_s) || r.time_s < 0) {
    throw InputError(cluster, "", "the collective time for " + std::to_string(r.bytes) +
                                     " bytes is not a finite number (latencies or bandwidths out of range)");
  }
}

int run_comm(const CommOptions& opt) {
  using namespace costmodel;
  ClusterSpec c = resolve_cluster(opt.cluster, opt.nodes);
  const CollectiveInfo* info = find_collective(opt.op);
  if (info == nullptr) {
    std::string known;
    for (const auto& k : collective_kinds()) known += (known.empty() ? "" : ", ") + std::string(k.name);
    throw InputError("--op", "", "unknown collective '" + opt.op + "' (known: " + known + ")");
  }
  if (opt.ranks < 1 || opt.ranks > c.total_gpus()) {
    throw InputError("--ranks", "", "must be between 1 and the " + std::to_string(c.total_gpus()) +
                                        " GPUs of " + c.name + " (got " + std::to_string(opt.ranks) + ")");
  }
  if (!(opt.factor > 1) || !std::isfinite(opt.factor)) {
    throw InputError("--factor", "", "must be a finite number > 1 (got " + std::to_string(opt.factor) + ")");
  }
  int64_t lo = parse_bytes(opt.min, "--min"), hi = parse_bytes(opt.max, "--max");
  if (lo > hi) throw InputError("--min", "", "must not exceed --max");
  // Bounded work: at most kMaxRows sizes between --min and --max.
  const double n_rows = std::floor(std::log(static_cast<double>(hi) / static_cast<double>(lo)) / std::log(opt.factor)) + 1;
  if (!(n_rows <= kMaxRows)) {
    throw InputError("--factor", "", "gives more than " + std::to_string(kMaxRows) +
                                         " sizes between --min and --max; use a larger factor");
  }

  if (opt.model != "auto" && opt.model != "nccl" && opt.model != "alpha-beta") {
    throw InputError("--model", "", "must be auto, nccl or alpha-beta (got '" + opt.model + "')");
  }
  if (opt.model == "nccl" && !c.nccl) {
    throw InputError("--model", "", "cluster '" + c.name + "' has no nccl block (docs/cluster-json.md), so NCCL's model has no constants for it");
  }
  const bool nccl = opt.model == "nccl" || (opt.model == "auto" && c.nccl);
  // NCCL_ALGO / NCCL_PROTO: NCCL's choice among what they allow, as NCCL makes it.
  const NcclRestriction only = parse_nccl_restriction(opt.nccl_algo, opt.nccl_proto);
  if (only.any() && (!nccl || opt.sim)) {
    throw InputError(only.option(), "",
                     opt.sim ? "restricts NCCL's analytical model; the simulator (--sim) takes NCCL's own choice"
                             : "restricts NCCL's model, which --model alpha-beta (or a cluster without an nccl block) does not use");
  }
  CommGroup g = contiguous_group(c, opt.ranks);
  std::vector<CommRow> rows;
  for (double b = static_cast<double>(lo); b <= static_cast<double>(hi) * (1 + 1e-12); b *= opt.factor) {
    auto bytes = static_cast<int64_t>(b);
    CollectiveEstimate e =
        only.any() ? nccl_collective_time(c, info->kind, g, static_cast<double>(bytes), only)
        : nccl     ? nccl_collective_time(c, info->kind, g, static_cast<double>(bytes))
                   : collective_time(c, info->kind, g, static_cast<double>(bytes));
    rows.push_back({bytes, e.time_s, e.algo, e.protocol});
  }
  for (const CommRow& r : rows) check_time(r, opt.cluster);
  std::string source = nccl ? "NCCL's tuning model" : "alpha-beta model";
  if (only.any()) source += ", " + only.env();
  if (opt.sim) {
#ifdef AUTODDL_HAVE_SIM
    sim::Fidelity f;
    if (!sim::parse_fidelity(opt.fidelity, f))
      throw InputError("--fidelity", "", "must be step or flow (got '" + opt.fidelity + "')");
    std::vector<double> sizes;
    for (const CommRow& r : rows) sizes.push_back(static_cast<double>(r.bytes));
    const std::vector<double> times = sim::simulate_collective_sweep(c, info->kind, opt.ranks, sizes, f);
    const sim::Program p = sim::collective_sweep_program(c, info->kind, opt.ranks, sizes);
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = {rows[i].bytes, times[i], p.task(static_cast<sim::TaskId>(i)).algo, {}};
    for (const CommRow& r : rows) check_time(r, opt.cluster);
    source = "SimGrid simulation (" + opt.fidelity + " fidelity)";
#else
    throw InputError("--sim", "", "this autoddl was built without the simulator (sim/ needs SimGrid)");
#endif
  }

  const char* redop = (info->kind == CollectiveKind::all_reduce || info->kind == CollectiveKind::reduce_scatter) ? "sum" : "none";
  std::printf("# autoddl comm: %s, %d ranks on %s (%d node%s x %d GPUs/node), %s\n",
              std::string(info->name).c_str(), opt.ranks, c.name.c_str(), g.nodes(),
              g.nodes() == 1 ? "" : "s", g.ranks_per_node, source.c_str());
  std::printf("#\n");
  std::printf("#%12s  %12s  %8s  %6s  %10s  %7s  %7s  %s\n", "size", "count", "type", "redop", "time", "algbw", "busbw", "algo");
  std::printf("#%12s  %12s  %8s  %6s  %10s  %7s  %7s\n", "(B)", "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)");
  nlohmann::json out = nlohmann::json::array();
  double busbw_sum = 0;
  for (const CommRow& r : rows) {
    double algbw = algbw_GBps(static_cast<double>(r.bytes), r.time_s);
    double busbw = busbw_GBps(info->kind, opt.ranks, static_cast<double>(r.bytes), r.time_s);
    busbw_sum += busbw;
    int64_t count = r.bytes / 4;  // float elements, as nccl-tests' default -d float
    std::string algo(collective_algo_name(r.algo));
    if (!r.protocol.empty()) algo += "/" + std::string(r.protocol);
    std::printf(" %12lld  %12lld  %8s  %6s  %10.2f  %7.2f  %7.2f  %s\n", static_cast<long long>(r.bytes),
                static_cast<long long>(count), "float", redop, r.time_s * 1e6, algbw, busbw, algo.c_str());
    out.push_back({{"bytes", r.bytes}, {"count", count}, {"time_us", r.time_s * 1e6},
                   {"algbw_GBps", algbw}, {"busbw_GBps", busbw}, {"algo", algo}});
  }
  std::printf("# Avg bus bandwidth    : %g\n", rows.empty() ? 0.0 : busbw_sum / static_cast<double>(rows.size()));
  if (!opt.json_file.empty()) write_json_atomic(opt.json_file, out);
  return 0;
}

}  // namespace

RunFn setup_comm(CLI::App& sub) {
  auto opt = std::make_shared<CommOptions>();
  add_cluster_options(sub, opt->cluster, opt->nodes);
  sub.add_option("--op", opt->op, "all_reduce | all_gather | reduce_scatter | all_to_all | send_recv")
      ->capture_default_str();
  sub.add_option("--ranks", opt->ranks, "Number of ranks (consecutive GPUs; beyond one node they span nodes)")
      ->required();
  sub.add_option("--min", opt->min, "Smallest size in bytes (suffixes K, M, G = 2^10, 2^20, 2^30)")->capture_default_str();
  sub.add_option("--max", opt->max, "Largest size in bytes")->capture_default_str();
  sub.add_option("--factor", opt->factor, "Size multiplier between rows")->capture_default_str();
  sub.add_option("--json", opt->json_file, "Also write the rows as JSON (bytes, time_us, algbw_GBps, busbw_GBps)");
  sub.add_option("--model", opt->model,
                 "auto (NCCL's tuning model where the cluster has an nccl block, else alpha-beta) | nccl | alpha-beta")
      ->capture_default_str();
  sub.add_option("--nccl-algo", opt->nccl_algo,
                 "As NCCL_ALGO: NCCL's model chooses only among this algorithm's protocols (ring, tree, nvls, "
                 "nvls_tree, pat)");
  sub.add_option("--nccl-proto", opt->nccl_proto, "As NCCL_PROTO: only this protocol (LL, LL128, Simple)");
  sub.add_flag("--sim", opt->sim, "Time the collectives with the SimGrid simulator instead of the analytical model");
  sub.add_option("--fidelity", opt->fidelity, "With --sim: step (every ring step) or flow (one flow per phase)")
      ->capture_default_str();
  sub.footer("busbw = algbw x 2(n-1)/n for all_reduce, (n-1)/n for all_gather/reduce_scatter/all_to_all, 1 for send_recv (nccl-tests).");
  return [opt] { return run_comm(*opt); };
}

}  // namespace autoddl::cli
