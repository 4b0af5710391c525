// Simulated events per second of the SimGrid executor on a large flow-fidelity program: a
// Megatron-style GPipe iteration (tensor parallel inside 8-GPU DGX A100 nodes, pipeline stages
// and data-parallel replicas across nodes, per-layer TP all-reduces, stage-boundary send/recv,
// bucketed gradient all-reduces). Counters: events (transfers, computations, waits), events/s
// over the simulation's own wall time (the fork and JSON transfer excluded), tasks/s.
#include <benchmark/benchmark.h>

#include <vector>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/sim/simulate.hpp"

using namespace autoddl;
using costmodel::CollectiveAlgo;
using costmodel::CollectiveKind;

namespace {

struct Shape {
  int tp = 8, pp = 1, dp = 1;
  int micro_batches = 8;
  int layers_per_stage = 4;
};

// device of (replica r, stage s, tensor rank t): one node per (r, s).
int device(const Shape& sh, int r, int s, int t) { return (r * sh.pp + s) * sh.tp + t; }

sim::Program megatron_gpipe(const Shape& sh) {
  const int devices = sh.tp * sh.pp * sh.dp;
  sim::Program p(devices, 3);  // compute, comm (TP and DP), stream 2: pipeline send/recv
  constexpr double layer_fwd_s = 2e-3, layer_bwd_s = 4e-3;
  constexpr double tp_bytes = 24e6, act_bytes = 24e6, grad_bytes = 100e6;
  for (int r = 0; r < sh.dp; ++r) {
    std::vector<std::vector<std::vector<sim::TaskId>>> arrive(sh.pp, std::vector<std::vector<sim::TaskId>>(sh.micro_batches));
    auto layer = [&](int s, std::vector<sim::TaskId> in, double seconds, sim::Phase ph) {
      std::vector<sim::TaskId> out(sh.tp);
      std::vector<int> group;
      std::vector<sim::TaskId> done;
      for (int t = 0; t < sh.tp; ++t) {
        sim::TaskOptions o{.phase = ph};
        if (!in.empty()) o.deps = {in[static_cast<size_t>(t)]};
        done.push_back(p.compute_seconds(device(sh, r, s, t), seconds, o));
        group.push_back(device(sh, r, s, t));
      }
      sim::TaskId ar = p.collective(CollectiveKind::all_reduce, group, tp_bytes, CollectiveAlgo::ring,
                                    {.deps = done, .phase = sim::Phase::boxing});
      return std::vector<sim::TaskId>(sh.tp, ar);
    };
    auto hop = [&](int s, int to, const std::vector<sim::TaskId>& in) {
      std::vector<sim::TaskId> out;
      for (int t = 0; t < sh.tp; ++t)
        out.push_back(p.send_recv(device(sh, r, s, t), device(sh, r, to, t), act_bytes,
                                  {.deps = {in[static_cast<size_t>(t)]}, .phase = sim::Phase::pipeline, .stream = 2}));
      return out;
    };
    for (int i = 0; i < sh.micro_batches; ++i) {
      std::vector<sim::TaskId> x;
      for (int s = 0; s < sh.pp; ++s) {
        for (int l = 0; l < sh.layers_per_stage; ++l) x = layer(s, x, layer_fwd_s, sim::Phase::forward);
        if (s + 1 < sh.pp) x = hop(s, s + 1, x);
      }
    }
    for (int i = sh.micro_batches - 1; i >= 0; --i) {
      std::vector<sim::TaskId> g;
      for (int s = sh.pp - 1; s >= 0; --s) {
        for (int l = 0; l < sh.layers_per_stage; ++l) g = layer(s, g, layer_bwd_s, sim::Phase::backward);
        if (s > 0) g = hop(s, s - 1, g);
      }
    }
  }
  // Gradient sync per (stage, tensor rank) across replicas, after that device's backward.
  if (sh.dp > 1) {
    for (int s = 0; s < sh.pp; ++s) {
      for (int t = 0; t < sh.tp; ++t) {
        std::vector<int> group;
        std::vector<sim::TaskId> deps;
        for (int r = 0; r < sh.dp; ++r) {
          group.push_back(device(sh, r, s, t));
          deps.push_back(p.last_on(device(sh, r, s, t), sim::kComputeStream));
        }
        p.collective(CollectiveKind::all_reduce, group, grad_bytes, CollectiveAlgo::ring,
                     {.deps = deps, .phase = sim::Phase::grad_sync});
      }
    }
  }
  return p;
}

void run(benchmark::State& state, const Shape& sh, sim::Fidelity f) {
  const int nodes = sh.pp * sh.dp;
  const auto cluster = costmodel::resolve_cluster("dgx-a100", nodes);
  const sim::Program program = megatron_gpipe(sh);
  sim::SimOptions o;
  o.fidelity = f;
  sim::SimResult r;
  double events = 0, wall = 0;
  for (auto _ : state) {
    r = sim::simulate(program, cluster, o);
    events += static_cast<double>(r.events);
    wall += r.wall_s;
  }
  state.counters["gpus"] = program.devices();
  state.counters["tasks"] = static_cast<double>(program.size());
  state.counters["events"] = static_cast<double>(r.events);
  state.counters["events_per_s"] = events / wall;
  state.counters["tasks_per_s"] = static_cast<double>(program.size()) * state.iterations() / wall;
  state.counters["simulated_s"] = r.iteration_s;
}

}  // namespace

// 64 GPUs: tp=8, pp=4, dp=2.
BENCHMARK_CAPTURE(run, flow_64gpus, Shape{.pp = 4, .dp = 2}, sim::Fidelity::flow)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(run, step_64gpus, Shape{.pp = 4, .dp = 2}, sim::Fidelity::step)->Unit(benchmark::kMillisecond);
// 256 GPUs: tp=8, pp=8, dp=4.
BENCHMARK_CAPTURE(run, flow_256gpus, Shape{.pp = 8, .dp = 4}, sim::Fidelity::flow)->Unit(benchmark::kMillisecond);
// 1024 GPUs: tp=8, pp=8, dp=16 (GPT-3 175B's Megatron layout), 8 micro-batches, 4 layers per stage.
BENCHMARK_CAPTURE(run, flow_1024gpus, Shape{.pp = 8, .dp = 16}, sim::Fidelity::flow)
    ->Unit(benchmark::kSecond)
    ->Iterations(1);
