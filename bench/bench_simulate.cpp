// End-to-end `autoddl simulate` cost of a lowered scheme: evaluate() + lowering + SimGrid run, on
// GPT-3 175B (Brown et al. 2020: 96 layers, h = 12288, 96 heads, seq 2048, batch 1536) with
// Megatron-LM's layout tp=8, pp=8, dp=16 on 128 DGX A100 nodes (1024 GPUs), flow fidelity, and
// on a small Megatron GPT on 2 nodes. Counters: tasks, events, events/s of the simulation, wall
// seconds of lowering and of the whole run, and peak RSS of this process and of the forked
// simulation (getrusage: the child's maximum).
#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include <chrono>
#include <string>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/zoo.hpp"
#include "autoddl/sim/report.hpp"

using namespace autoddl;

namespace {

struct Case {
  const char* knobs;
  int nodes;
  const char* scheme;
};

double max_rss_mib(int who) {
  rusage u{};
  getrusage(who, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // KiB on Linux
}

void run(benchmark::State& state, Case c, sim::Fidelity f) {
  const auto cluster = costmodel::resolve_cluster("dgx-a100", c.nodes);
  const auto graph = costmodel::build_zoo_model("gpt", costmodel::parse_knob_list(c.knobs));
  const auto scheme = costmodel::make_scheme(c.scheme, graph, cluster, {});
  sim::SimOptions o;
  o.fidelity = f;
  sim::SimReport r;
  double wall = 0, events = 0, sim_wall = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    r = sim::simulate_scheme(graph, cluster, scheme, o).report;
    wall += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    events += static_cast<double>(r.events);
    sim_wall += r.wall_s;
  }
  const auto n = static_cast<double>(state.iterations());
  state.counters["gpus"] = r.devices;
  state.counters["computing_gpus"] = r.computing_devices;
  state.counters["tasks"] = static_cast<double>(r.tasks);
  state.counters["events"] = static_cast<double>(r.events);
  state.counters["events_per_s"] = events / sim_wall;
  state.counters["lowering_s"] = r.lowering_wall_s;
  state.counters["simulation_s"] = sim_wall / n;
  state.counters["wall_s"] = wall / n;
  state.counters["simulated_iteration_s"] = r.iteration_s;
  state.counters["analytical_iteration_s"] = r.analytical_iteration_s;
  state.counters["rss_self_MiB"] = max_rss_mib(RUSAGE_SELF);
  state.counters["rss_simulation_MiB"] = max_rss_mib(RUSAGE_CHILDREN);
}

}  // namespace

// 16 GPUs, 4 layers: a quick reference point.
BENCHMARK_CAPTURE(run, gpt_megatron_16gpus_flow,
                  Case{"layers=4,hidden=1024,heads=16,seq=1024,batch=32", 2, "megatron:tp=8,pp=2,dp=1,mb=4"},
                  sim::Fidelity::flow)
    ->Unit(benchmark::kMillisecond);
// GPT-3 175B, 1024 GPUs (issue 5's scale target: under 60 s and 4 GiB on 2 cores).
BENCHMARK_CAPTURE(run, gpt3_175b_1024gpus_flow,
                  Case{"layers=96,hidden=12288,heads=96,seq=2048,batch=1536", 128, "megatron:tp=8,pp=8,dp=16"},
                  sim::Fidelity::flow)
    ->Unit(benchmark::kSecond)
    ->Iterations(1);
