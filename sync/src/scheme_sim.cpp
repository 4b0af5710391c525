// A scheme's simulated iteration with a strategy's gradient sync (scheme_sim.hpp).
#ifdef AUTODDL_SYNC_HAVE_SIM
#include "autoddl/sync/scheme_sim.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <unordered_map>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/sim/lowering.hpp"
#include "autoddl/sim/simulate.hpp"
#include "sync_emit.hpp"

namespace autoddl::sync {

using namespace costmodel;
using sim::Task;
using sim::TaskId;

namespace {

// The ops a compute task runs: its name is an op's, or "first .. last" for a merged run.
struct OpNames {
  std::unordered_map<std::string, int> index;
  explicit OpNames(const Graph& g) {
    for (size_t i = 0; i < g.ops.size(); ++i) index.emplace(g.ops[i].name, static_cast<int>(i));
  }
  bool runs(const std::string& task_name, int op) const {
    const size_t dots = task_name.find(" .. ");
    auto at = [&](const std::string& n) {
      auto it = index.find(n);
      return it == index.end() ? -1 : it->second;
    };
    const int a = at(task_name.substr(0, dots));
    const int b = dots == std::string::npos ? a : at(task_name.substr(dots + 4));
    return a >= 0 && b >= 0 && std::min(a, b) <= op && op <= std::max(a, b);
  }
};

int bucket_index(const std::string& name) {
  constexpr std::string_view prefix = "bucket ";
  if (name.rfind(prefix, 0) != 0) return -1;
  return std::atoi(name.c_str() + prefix.size());
}

}  // namespace

int64_t replace_gradient_sync(sim::LoweredProgram& lowered, const Graph& g, const IterationPlan& plan,
                              const DataParallelSync& dp, const Strategy& st) {
  const sim::Program& old = lowered.program;
  const auto& tasks = old.tasks();
  TaskId first = static_cast<TaskId>(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (tasks[i].phase == sim::Phase::grad_sync) {
      first = static_cast<TaskId>(i);
      break;
    }
  }
  // The first step of bucket b on stage s, per device: its deps are the backward tasks that
  // release the bucket's gradients there.
  std::map<std::pair<int, int>, std::unordered_map<int, TaskId>> first_step;
  for (size_t i = static_cast<size_t>(first); i < tasks.size(); ++i) {
    const Task& t = tasks[i];
    if (t.phase == sim::Phase::grad_sync) {
      if (t.deps.empty()) continue;
      auto& by_device = first_step[{std::max(0, t.stage), bucket_index(t.name)}];
      for (int d : t.devices) by_device.emplace(d, static_cast<TaskId>(i));
    } else if (!(t.kind == sim::TaskKind::compute && t.phase == sim::Phase::optimizer)) {
      throw InputError("--sync", "", "the lowered program has '" + t.name + "' after its gradient sync; "
                       "only the optimizer step can follow it");
    }
  }
  // Per device: its last backward compute before the sync (a gradient no bucket syncs).
  std::vector<TaskId> last_compute(static_cast<size_t>(old.devices()), -1);
  for (TaskId i = 0; i < first; ++i) {
    const Task& t = tasks[static_cast<size_t>(i)];
    if (t.kind == sim::TaskKind::compute) last_compute[static_cast<size_t>(t.devices.front())] = i;
  }
  // Per stage and variable: the bucket and op that make it ready.
  std::map<std::pair<int, int>, std::pair<int, int>> source;  // (stage, tensor) -> (bucket, op)
  for (int s = 0; s < plan.stages; ++s) {
    const auto& buckets = plan.buckets[static_cast<size_t>(s)];
    for (size_t b = 0; b < buckets.size(); ++b)
      for (const PlannedGradient& pg : buckets[b].grads) source[{s, pg.tensor}] = {static_cast<int>(b), pg.op};
  }
  std::unordered_map<std::string, int> tensor_of;
  for (size_t t = 0; t < g.tensors.size(); ++t) tensor_of.emplace(g.tensors[t].name, static_cast<int>(t));
  const OpNames names(g);
  auto ready_on = [&](int stage, int var, int device) -> TaskId {
    auto src = source.find({stage, tensor_of.at(dp.vars[static_cast<size_t>(var)].name)});
    if (src != source.end()) {
      auto fs = first_step.find({stage, src->second.first});
      if (fs != first_step.end() && fs->second.count(device)) {
        TaskId fallback = -1;
        for (TaskId dep : tasks[static_cast<size_t>(fs->second.at(device))].deps) {
          const Task& t = tasks[static_cast<size_t>(dep)];
          if (t.kind != sim::TaskKind::compute || t.devices.front() != device) continue;
          if (names.runs(t.name, src->second.second)) return dep;
          fallback = std::max(fallback, dep);
        }
        if (fallback >= 0) return fallback;
      }
    }
    return last_compute[static_cast<size_t>(device)];
  };

  const int base_streams = old.streams_per_device();
  const int lanes = dp.ranks * dp.nodes;
  sim::Program p(old.devices(), base_streams + lanes);
  for (int k = 0; k < base_streams; ++k) p.set_stream_name(k, old.stream_name(k));
  std::vector<double> expected;
  for (TaskId i = 0; i < first; ++i) {
    p.add(tasks[static_cast<size_t>(i)]);
    expected.push_back(lowered.expected_s[static_cast<size_t>(i)]);
  }
  // The last sync task of each (device, stream): the optimizer waits for them.
  std::vector<std::map<int, TaskId>> last_sync(static_cast<size_t>(old.devices()));
  int64_t transfers = 0;
  for (const StageSync& stage : dp.stages) {
    const StageProblem sp = stage_problem(dp, stage, st);
    for (const std::vector<int>& group : stage_groups(plan, dp.dims, stage.stage)) {
      detail::SyncGroupLayout layout;
      layout.devices = group;
      layout.nodes = dp.nodes;
      layout.ranks_per_node = dp.ranks_per_node;
      layout.ar_stream = sim::kGradSyncStream;
      layout.first_lane = base_streams;
      // As the lowering gives a node-crossing dim's groups their share of the NICs.
      if (dp.nodes > 1) {
        const int nics = dp.cluster.inter.nics_per_node;
        layout.channels = std::max(1, (nics + dp.groups_per_node - 1) / dp.groups_per_node);
      }
      layout.stage = stage.stage;
      int computing = group.front();
      for (int d : group) {
        if (lowered.computes[static_cast<size_t>(d)]) {
          computing = d;
          break;
        }
      }
      detail::SyncEmitInput in;
      in.vars = &sp.vars;
      in.strategy = &sp.strategy;
      in.cluster = &dp.cluster;
      in.order = sp.timeline.ready_s;
      in.ready = [&](int rank, int var) {
        const int d = group[static_cast<size_t>(rank)];
        return ready_on(stage.stage, sp.index[static_cast<size_t>(var)],
                        lowered.computes[static_cast<size_t>(d)] ? d : computing);
      };
      detail::SyncEmitResult r = detail::emit_strategy_sync(p, layout, in);
      transfers += r.transfers;
      expected.insert(expected.end(), r.expected_s.begin(), r.expected_s.end());
      for (TaskId id : r.tasks) {
        const Task& t = p.task(id);
        for (int d : t.devices) last_sync[static_cast<size_t>(d)][t.stream] = id;
      }
    }
  }
  for (size_t i = static_cast<size_t>(first); i < tasks.size(); ++i) {
    Task t = tasks[i];
    if (t.phase == sim::Phase::grad_sync) continue;
    t.deps.clear();
    for (const auto& [stream, id] : last_sync[static_cast<size_t>(t.devices.front())]) t.deps.push_back(id);
    p.add(std::move(t));
    expected.push_back(lowered.expected_s[i]);
  }
  lowered.program = std::move(p);
  lowered.expected_s = std::move(expected);
  return transfers;
}

SchemeSyncSimulation simulate_scheme_with_strategy(const Graph& g, const ClusterSpec& c, const Scheme& s,
                                                   const IterationPlan& plan, const DataParallelSync& dp,
                                                   const Strategy& st, const sim::SimOptions& options,
                                                   const sim::LoweringOptions& lowering) {
  const auto t0 = std::chrono::steady_clock::now();
  SchemeSyncSimulation out;
  out.lowered = sim::lower_scheme(g, c, s, lowering);
  out.cost = cost_with_strategy(out.lowered.analytical, dp, st);
  out.transfers = replace_gradient_sync(out.lowered, g, plan, dp, st);
  // The analytical side is cost --sync's: the strategy's sync and its exposed tail.
  CostReport& a = out.lowered.analytical;
  a.iteration_s = out.cost.iteration_s;
  a.grad_sync_exposed_s = out.cost.strategy.exposed_sync_s;
  a.grad_sync_s = out.cost.strategy.ps_sum_s + out.cost.strategy.ar_sum_s;
  const double lowering_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  sim::SimOptions run = options;
  run.dtype = out.lowered.train_dtype;
  out.result = sim::simulate(out.lowered.program, c, run);
  out.report = sim::make_sim_report(g, out.lowered, out.result, options.fidelity);
  out.report.lowering_wall_s = lowering_s;
  return out;
}

}  // namespace autoddl::sync
#endif
