// Speed of the analytical cost model: evaluating one scheme of a 96-layer GPT (GPT-3 175B
// shapes) on 128 GPUs, and lowering an expert scheme to per-op signatures. Issue 3's target:
// one evaluation under 50 ms. Counters: evaluations per second, ops per evaluation.
#include <benchmark/benchmark.h>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/zoo.hpp"

using namespace autoddl::costmodel;

namespace {

const Graph& gpt96() {
  static const Graph g = build_zoo_model(
      "gpt", {{"layers", "96"}, {"hidden", "12288"}, {"heads", "96"}, {"seq", "2048"}, {"batch", "1536"}});
  return g;
}

void BM_Evaluate(benchmark::State& state, const char* spec) {
  const Graph& g = gpt96();
  ClusterSpec c = resolve_cluster("dgx-a100", 16);
  Scheme s = make_scheme(spec, g, c, {});
  for (auto _ : state) {
    CostReport r = evaluate(g, c, s);
    benchmark::DoNotOptimize(r.iteration_s);
  }
  state.counters["evals_per_s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["ops"] = static_cast<double>(g.ops.size());
}

void BM_LowerAndEvaluate(benchmark::State& state, const char* spec) {
  const Graph& g = gpt96();
  ClusterSpec c = resolve_cluster("dgx-a100", 16);
  for (auto _ : state) {
    CostReport r = evaluate(g, c, make_scheme(spec, g, c, {}));
    benchmark::DoNotOptimize(r.iteration_s);
  }
}

}  // namespace

BENCHMARK_CAPTURE(BM_Evaluate, gpt96_dp, "dp")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Evaluate, gpt96_megatron_tp8_pp8_dp2, "megatron:tp=8,pp=8,dp=2")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Evaluate, gpt96_megatron_tp8_pp1_dp16, "megatron:tp=8,pp=1,dp=16")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_LowerAndEvaluate, gpt96_megatron_tp8_pp8_dp2, "megatron:tp=8,pp=8,dp=2")->Unit(benchmark::kMillisecond);
