// The executor: one SimGrid actor per (device, stream) walks that stream's tasks in program
// order. A task waits for its dependencies (the actor suspends until the task it waits for
// resumes it); compute runs on the device's host; a collective waits for all participants and
// the last to arrive drives the algorithm (collectives.hpp) while the others stay blocked, as
// a stream blocked in an NCCL kernel. Transfers are issued lazily by the drivers, so
// concurrent collectives share links.
#include "executor.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <utility>

#include "autoddl/costmodel/calibration.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/nccl_model.hpp"
#include "autoddl/sim/collectives.hpp"
#include "autoddl/sim/engine_argv.hpp"
#include "autoddl/sim/platform.hpp"
#include "transfers.hpp"

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(autoddl_sim_executor, autoddl_sim, "autoddl: program executor");

namespace autoddl::sim {

namespace {

// Calibrated collectives (sim/README.md "Calibrated network"), and NCCL's model: when the
// cluster's calibration measured this (kind, ranks, ranks per node), or the cluster has an
// `nccl` block (all-reduce, all-gather, reduce-scatter: the time NCCL's tuner gives, as the
// analytical model's mesh dims use it), the collective's transfers carry `bytes_scale` times
// their bytes and the collective first waits `extra_latency_s`, so that, uncontended, it takes
// that target time instead of the α-β time of the algorithm it runs:
// with T = L + B the model's time (L its latency part, its time at 0 bytes) and r = T_target / T,
// wait max(0, (r − 1)·L) and scale the bytes by (T_target − L − wait) / B (= r when r >= 1).
// Contended, the scaled bytes share links like the real, slower transfers would.
// A target below the simulated algorithm's own latency (NCCL's tree/LL on a few KB, where the
// simulator's ring or tree pays per-hop link latencies) cannot be reached by scaling bytes: such
// a collective is latency-bound, so it waits the target and puts no flows on the links (its
// bytes are too few to matter for contention).
struct CollectiveScale {
  double bytes_scale = 1;
  double extra_latency_s = 0;
  bool latency_bound = false;
};

// NCCL's tuning for each group shape a program uses, built once: a program runs the same few
// shapes thousands of times, and a tuning table costs far more than a lookup in it.
class NcclTunings {
 public:
  explicit NcclTunings(const costmodel::ClusterSpec& c) : c_(c) {}
  // NCCL's tuning for the group alone on its nodes' NICs: when other groups share those NICs,
  // the simulator's own contention slows the scaled flows, so the share is not counted twice.
  const costmodel::NcclTuning& of(const costmodel::CommGroup& grp) {
    auto [it, fresh] = by_shape_.try_emplace({grp.ranks, grp.ranks_per_node});
    if (fresh) {
      it->second = costmodel::nccl_tuning(
          c_, costmodel::NcclComm{grp.ranks, grp.ranks_per_node, double(c_.inter.nics_per_node)});
    }
    return it->second;
  }

 private:
  const costmodel::ClusterSpec& c_;
  std::map<std::pair<int, int>, costmodel::NcclTuning> by_shape_;
};

double target_time_s(const costmodel::ClusterSpec& c, NcclTunings& tunings, const Task& t,
                     const costmodel::CommGroup& grp) {
  if (c.calibration) {
    const double calibrated = c.calibration->collective_time_s(t.collective, grp, t.bytes);
    if (calibrated >= 0) return calibrated;
  }
  if (c.nccl) {
    const auto e = costmodel::nccl_time(tunings.of(grp), t.collective, t.bytes);
    if (e.time_s >= 0) return e.time_s;  // NCCL's model priced it (not a p2p kind)
  }
  return -1;
}

CollectiveScale target_scale(const costmodel::ClusterSpec& c, NcclTunings& tunings, const Task& t,
                             int gpus_per_node) {
  if ((!c.calibration && !c.nccl) || t.devices.size() < 2 || t.bytes <= 0) return {};
  const int local = ranks_per_node(t.devices, gpus_per_node);
  if (local <= 0) return {};
  const costmodel::CommGroup grp{static_cast<int>(t.devices.size()), local};
  const double target = target_time_s(c, tunings, t, grp);
  if (target < 0) return {};
  const double model = costmodel::collective_algo_time_s(c, t.collective, t.algo, grp, t.bytes);
  const double latency = costmodel::collective_algo_time_s(c, t.collective, t.algo, grp, 0);
  if (model <= 0 || latency < 0 || model - latency <= 0) return {};
  if (target <= latency) return {0, target, true};
  const double r = target / model;
  CollectiveScale s;
  s.extra_latency_s = std::max(0.0, (r - 1) * latency);
  s.bytes_scale = std::max(0.0, (target - latency - s.extra_latency_s) / (model - latency));
  return s;
}

class Executor {
 public:
  Executor(const Program& p, const Platform& plat, const costmodel::ClusterSpec& cluster, Fidelity f,
           double gpu_flops)
      : prog_(p), plat_(plat), cluster_(cluster), fidelity_(f), gpu_flops_(gpu_flops), state_(p.size()),
        timing_(p.size()) {}

  void start_actors() {
    for (int d = 0; d < prog_.devices(); ++d) {
      for (int s = 0; s < prog_.streams_per_device(); ++s) {
        if (prog_.stream_tasks(d, s).empty()) continue;
        sg4::Actor::create("gpu" + std::to_string(d) + "-s" + std::to_string(s), plat_.gpus[static_cast<size_t>(d)],
                           [this, d, s] { run_stream(d, s); });
      }
    }
  }

  std::vector<TaskTiming> take_timings() { return std::move(timing_); }
  size_t unfinished() const {
    return static_cast<size_t>(std::count_if(state_.begin(), state_.end(), [](const State& s) { return !s.done; }));
  }

 private:
  struct State {
    bool done = false;
    int arrived = 0;
    std::vector<sg4::Actor*> waiters;
  };

  void wait_done(TaskId t) {
    State& st = state_[static_cast<size_t>(t)];
    while (!st.done) {
      st.waiters.push_back(sg4::Actor::self());
      sg4::this_actor::suspend();
    }
  }

  void finish(TaskId t) {
    State& st = state_[static_cast<size_t>(t)];
    st.done = true;
    for (sg4::Actor* a : st.waiters) a->resume();
    std::vector<sg4::Actor*>().swap(st.waiters);
  }

  RankGroup group_of(const Task& t) const {
    RankGroup g;
    g.hosts.reserve(t.devices.size());
    for (int d : t.devices) g.hosts.push_back(plat_.gpus[static_cast<size_t>(d)]);
    g.local_size = ranks_per_node(t.devices, plat_.gpus_per_node);
    g.nic_channels = t.channels > 0 ? t.channels : plat_.nics_per_node;
    return g;
  }

  void run_stream(int device, int stream) {
    for (TaskId id : prog_.stream_tasks(device, stream)) {
      const Task& t = prog_.task(id);
      for (TaskId dep : t.deps) wait_done(dep);
      TaskTiming& tm = timing_[static_cast<size_t>(id)];
      if (t.devices.size() > 1 && ++state_[static_cast<size_t>(id)].arrived < static_cast<int>(t.devices.size())) {
        wait_done(id);  // the last participant drives it
        continue;
      }
      tm.start_s = sg4::Engine::get_clock();
      if (t.kind == TaskKind::compute) {
        compute_flops(t.flops + t.seconds * gpu_flops_);
      } else {
        XBT_DEBUG("%s %s over %zu devices, %g bytes", t.name.c_str(),
                  std::string(costmodel::collective_info(t.collective).name).c_str(), t.devices.size(), t.bytes);
        const CollectiveScale scale = target_scale(cluster_, nccl_tunings_, t, plat_.gpus_per_node);
        wait_latency(scale.extra_latency_s);
        if (!scale.latency_bound) {
          run_collective(t.collective, t.algo, group_of(t), t.bytes * scale.bytes_scale, fidelity_);
        }
      }
      tm.end_s = sg4::Engine::get_clock();
      finish(id);
    }
  }

 private:
  const Program& prog_;
  const Platform& plat_;
  const costmodel::ClusterSpec& cluster_;
  Fidelity fidelity_;
  double gpu_flops_;
  std::vector<State> state_;
  std::vector<TaskTiming> timing_;
  NcclTunings nccl_tunings_{cluster_};
};

}  // namespace

SimResult execute_program(const Program& program, const costmodel::ClusterSpec& cluster, const SimOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  std::vector<std::string> args = {"autoddl-sim", "--log=xbt_cfg.thres:warning"};
  args.insert(args.end(), options.simgrid_args.begin(), options.simgrid_args.end());
  EngineArgv argv(std::move(args));
  sg4::Engine engine(argv.argc(), argv.argv());
  configure_alpha_beta_network();
  Platform plat = build_platform(cluster, options.dtype);
  if (program.devices() > static_cast<int>(plat.gpus.size()))
    throw InputError("program", "devices",
                     std::to_string(program.devices()) + " devices but the cluster has " +
                         std::to_string(plat.gpus.size()) + " GPUs");

  auto seconds_since = [](auto t0) { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  XBT_VERB("platform built in %.3f s wall", seconds_since(wall_start));
  Executor ex(program, plat, cluster, options.fidelity, cluster.gpu.peak_flops(options.dtype));
  ex.start_actors();
  XBT_VERB("actors started at %.3f s wall", seconds_since(wall_start));
  engine.run();
  XBT_VERB("simulation ran until %.3f s wall", seconds_since(wall_start));
  xbt_assert(ex.unfinished() == 0, "%zu tasks never ran (a Program cannot deadlock: executor bug)", ex.unfinished());

  SimResult r;
  r.iteration_s = sg4::Engine::get_clock();
  r.tasks = ex.take_timings();
  summarize_usage(program, r);

  const NetworkStats& stats = NetworkStats::current();
  r.events = stats.events();
  for (const LinkBytes& lb : stats.link_bytes()) {
    if (lb.bytes <= 0) continue;
    LinkUse u;
    u.name = lb.link->get_name();
    u.bytes = lb.bytes;
    u.bw_bytes_per_s = lb.link->get_bandwidth();
    u.utilization = r.iteration_s > 0 ? lb.bytes / (u.bw_bytes_per_s * r.iteration_s) : 0;
    r.busiest_links.push_back(std::move(u));
  }
  std::sort(r.busiest_links.begin(), r.busiest_links.end(), [](const LinkUse& a, const LinkUse& b) {
    return a.utilization != b.utilization ? a.utilization > b.utilization : a.name < b.name;
  });
  if (r.busiest_links.size() > static_cast<size_t>(std::max(0, options.busiest_links)))
    r.busiest_links.resize(static_cast<size_t>(std::max(0, options.busiest_links)));
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  XBT_VERB("simulated %zu tasks in %g s (%lld events, %g s wall)", program.size(), r.iteration_s,
           static_cast<long long>(r.events), r.wall_s);
  return r;
}

}  // namespace autoddl::sim
