// The lowering is described in simulated.hpp's header comment.
#ifdef AUTODDL_SYNC_HAVE_SIM
#include "autoddl/sync/simulated.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <random>

#include "autoddl/costmodel/compute.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/sim/program.hpp"
#include "autoddl/sim/simulate.hpp"
#include "sync_emit.hpp"

namespace autoddl::sync {

using namespace costmodel;

namespace {

struct Jitter {
  std::mt19937_64 rng;
  std::normal_distribution<double> normal{0.0, 1.0};
  double factor(double sigma) { return sigma > 0 ? std::max(0.5, 1 + sigma * normal(rng)) : 1.0; }
};

// The compute side of one iteration, the same for every run of every strategy of a model on a
// cluster: backward ready points (the distinct first readers, latest op first) and the
// per-op times of the analytical evaluator summed per segment (segment i ends at op points[i];
// the last one runs after the last point).
struct ComputeTimeline {
  std::vector<int> points;
  std::vector<int> point_of_var;  // per variable
  double forward_s = 0;
  std::vector<double> segment_s;
};

ComputeTimeline compute_timeline(const Graph& g, const std::vector<Variable>& vars, const ClusterSpec& c) {
  ComputeTimeline t;
  const int W = c.total_gpus();
  const int last_op = static_cast<int>(g.ops.size()) - 1;
  for (const Variable& v : vars) t.points.push_back(std::min<int>(v.first_reader, last_op));
  std::sort(t.points.begin(), t.points.end(), std::greater<>());
  t.points.erase(std::unique(t.points.begin(), t.points.end()), t.points.end());
  std::map<int, int> point_of_op;
  for (size_t i = 0; i < t.points.size(); ++i) point_of_op[t.points[i]] = static_cast<int>(i);
  for (const Variable& v : vars) t.point_of_var.push_back(point_of_op.at(std::min<int>(v.first_reader, last_op)));
  t.segment_s.assign(t.points.size() + 1, 0.0);
  size_t seg = 0;
  for (int i = last_op; i >= 0; --i) {
    const Op& op = g.ops[static_cast<size_t>(i)];
    t.segment_s[seg] += op_kernel_times(c.gpu, g, op, 1.0 / W).bwd_s;
    if (seg < t.points.size() && i == t.points[seg]) ++seg;
  }
  for (const Op& op : g.ops) t.forward_s += op_kernel_times(c.gpu, g, op, 1.0 / W).fwd_s;
  return t;
}

// One run of the iteration, jittered by `seed`.
int64_t emit_run(sim::Program& p, const ComputeTimeline& t, const std::vector<Variable>& vars,
                 const Strategy& s, const ClusterSpec& c, const SimSyncOptions& options, uint64_t seed) {
  const int W = c.total_gpus();
  Jitter jitter{std::mt19937_64(seed)};
  // The points that release a transfer: a PS shard's variable's, an all-reduce group's last
  // member's. Segments between them run back to back on the compute stream with nothing
  // waiting on their ends, so they are one task of the summed (jittered) seconds: the same
  // timeline with far fewer SimGrid activities.
  std::unordered_map<std::string, int> var_point;
  for (size_t i = 0; i < vars.size(); ++i) var_point[vars[i].name] = t.point_of_var[i];
  std::vector<char> releases(t.points.size(), 0);
  std::map<int, int> group_point;
  for (const VarConfig& vc : s.vars) {
    const int pt = var_point.at(vc.var);
    for (const Synchronizer& sy : vc.parts) {
      if (sy.arch == Arch::ps) releases[static_cast<size_t>(pt)] = 1;
      else group_point[sy.group] = std::max(group_point[sy.group], pt);
    }
  }
  for (const auto& [group, pt] : group_point) releases[static_cast<size_t>(pt)] = 1;

  std::vector<std::vector<sim::TaskId>> ready(static_cast<size_t>(W));  // [rank][point]
  for (int d = 0; d < W; ++d) {
    p.compute_seconds(d, t.forward_s * jitter.factor(options.compute_jitter),
                      {.phase = sim::Phase::forward, .name = "forward"});
    double pending_s = 0;
    size_t waiting = 0;  // points whose segment is in pending_s
    for (size_t k = 0; k < t.segment_s.size(); ++k) {
      pending_s += t.segment_s[k] * jitter.factor(options.compute_jitter);
      if (k < t.points.size()) ++waiting;
      if (k + 1 < t.segment_s.size() && (k >= t.points.size() || !releases[k])) continue;
      sim::TaskId id = p.compute_seconds(d, pending_s,
                                         {.phase = sim::Phase::backward, .name = "backward " + std::to_string(k)});
      ready[static_cast<size_t>(d)].insert(ready[static_cast<size_t>(d)].end(), waiting, id);
      waiting = 0;
      pending_s = 0;
    }
  }

  // Streams 0/1: compute and all-reduce; then one PS lane per (worker, server node) pair
  // (sync_emit.hpp; only streams with tasks get a SimGrid actor).
  detail::SyncGroupLayout layout;
  for (int d = 0; d < W; ++d) layout.devices.push_back(d);
  layout.nodes = c.nodes;
  layout.ranks_per_node = c.gpus_per_node;
  layout.ar_stream = sim::kCommStream;
  layout.first_lane = 2;
  detail::SyncEmitInput in;
  in.vars = &vars;
  in.strategy = &s;
  in.cluster = &c;
  in.order.assign(t.point_of_var.begin(), t.point_of_var.end());
  in.ready = [&](int rank, int var) {
    return ready[static_cast<size_t>(rank)][static_cast<size_t>(t.point_of_var[static_cast<size_t>(var)])];
  };
  in.bytes_factor = [&] { return jitter.factor(options.network_jitter); };
  return detail::emit_strategy_sync(p, layout, in).transfers;
}

}  // namespace

// The caps keep a simulation's program (GPUs x (2 + GPUs x nodes) streams) within sim's limit.
static_assert(int64_t{kMaxSyncSimGpus} * (2 + int64_t{kMaxSyncSimGpus} * kMaxSyncSimNodes) <= sim::kMaxProgramStreams);

void check_sync_sim_cluster(const ClusterSpec& c) {
  if (c.nodes <= kMaxSyncSimNodes && c.total_gpus() <= kMaxSyncSimGpus) return;
  throw InputError("simulator", "cluster",
                   "simulates a sync strategy on at most " + std::to_string(kMaxSyncSimNodes) + " nodes and " +
                       std::to_string(kMaxSyncSimGpus) + " GPUs (this cluster has " + std::to_string(c.nodes) +
                       " nodes, " + std::to_string(c.total_gpus()) +
                       " GPUs); the analytical evaluator (sync evaluate without --sim) has no such limit");
}

SimSyncResult simulate_strategy(const Graph& g, const std::vector<Variable>& vars, const Strategy& s,
                                const ClusterSpec& c, const SimSyncOptions& options) {
  check_sync_sim_cluster(c);
  const int W = c.total_gpus(), N = c.nodes;
  const ComputeTimeline t = compute_timeline(g, vars, c);
  const int runs = std::max(1, options.runs);
  // One simulation per run: copies of the iteration on disjoint nodes of one simulation run
  // exactly as alone on a star network, but cost SimGrid more than separate runs (measured
  // 4-5x for 3 copies against 3x), whose fork and platform setup are small next to the flows.
  sim::SimOptions so;
  so.fidelity = options.flow_fidelity ? sim::Fidelity::flow : sim::Fidelity::step;
  so.dtype = vars.empty() ? DType::fp32 : vars.front().dtype;
  // The full max-min re-solve at every event, not the lazy selective update (simulated.hpp).
  so.simgrid_args.push_back("--cfg=network/optim:Full");
  SimSyncResult result;
  for (int run = 0; run < runs; ++run) {
    sim::Program p(W, 2 + W * N);
    result.transfers += emit_run(p, t, vars, s, c, options, options.seed + static_cast<uint64_t>(run));
    const sim::SimResult r = sim::simulate(p, c, so);
    result.runs_s.push_back(r.iteration_s);
    result.compute_s = std::max(result.compute_s, r.compute_s);
    result.exposed_comm_s = std::max(result.exposed_comm_s, r.exposed_comm_s);
    result.wall_s += r.wall_s;
    ++result.simulations;
  }
  result.transfers /= runs;
  double sum = 0;
  for (double x : result.runs_s) sum += x;
  result.iteration_s = sum / runs;
  return result;
}

}  // namespace autoddl::sync
#endif
