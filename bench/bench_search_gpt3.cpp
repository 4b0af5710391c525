// Issue 11's production case: GPT-3 175B (96 layers, hidden 12288, 96 heads, seq 2048, vocab
// 51200, global batch 1024) on 128 A100 (dgx-a100, 16 nodes). The parts: the cost-table set-up
// of the configuration `cd` picks on the fixed [16, 8] mesh, and plain CD from every seed on
// those tables; the wholes, as `autoddl search` runs them: `cd` on [16, 8] (configuration
// probes, descent from every seed, each end point judged by evaluate()), `cd-expert` with the
// `megatron` baseline (one walk of the Megatron-LM grid, descent from its best points), and the
// default search (cd, cd-nbh, cd-mesh, cd-expert, baselines), each with --jobs 1 and 2 (the argument).
// Counters: the iteration seconds found, and the best grid point's.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/zoo.hpp"
#include "autoddl/search/assignment.hpp"
#include "autoddl/search/coordinate_descent.hpp"
#include "autoddl/search/scheme_map.hpp"
#include "autoddl/search/searcher.hpp"

namespace {

using namespace autoddl::costmodel;
using namespace autoddl::search;

const Graph& gpt3() {
  static const Graph g = build_zoo_model(
      "gpt", {{"layers", "96"}, {"hidden", "12288"}, {"heads", "96"}, {"seq", "2048"}, {"vocab", "51200"}, {"batch", "1024"}});
  return g;
}

const ClusterSpec& a100x128() {
  static const ClusterSpec c = resolve_cluster("dgx-a100", 16);
  return c;
}

double iteration_of(const SearchRun& run, const char* method) {
  for (const SearchResult& r : run.results) {
    if (r.method == method) return r.report.iteration_s;
  }
  return 0;
}

// The tables' options `cd` settles on for [16, 8] (micro-batches, recompute, optimizer
// sharding, sync weight), found once by a search.
const TableOptions& cd_tables() {
  static const TableOptions o = [] {
    SearchOptions so;
    so.mesh_shape = {16, 8};
    const nlohmann::json cfg = run_search(gpt3(), a100x128(), so, {"cd"}).config;
    TableOptions t;
    t.mesh_shape = so.mesh_shape;
    t.micro_batches = cfg["micro_batches"].get<int>();
    for (Recompute r : {Recompute::none, Recompute::selective, Recompute::full}) {
      if (recompute_name(r) == cfg["recompute"].get<std::string>()) t.recompute = r;
    }
    t.shard_optimizer = cfg["shard_optimizer"].get<bool>();
    t.sync_weight = cfg["sync_weight"].get<double>();
    return t;
  }();
  return o;
}

void BM_TableSetup_GPT3_16x8(benchmark::State& state) {
  cd_tables();
  for (auto _ : state) {
    CostTables t(gpt3(), a100x128(), cd_tables());
    benchmark::DoNotOptimize(t.terms());
  }
}
BENCHMARK(BM_TableSetup_GPT3_16x8)->Unit(benchmark::kMillisecond);

void BM_CdFromSeeds_GPT3_16x8(benchmark::State& state) {
  const CostTables t(gpt3(), a100x128(), cd_tables());
  const Coordinates co = make_coordinates(t, false);
  const std::vector<Seed> seeds = make_seeds(t, 2, 1);
  double best = 0;
  for (auto _ : state) {
    for (const Seed& s : seeds) {
      Assignment a(t, s.choice);
      coordinate_descent(a, co, CdOptions{});
      best = &s == &seeds[0] ? a.objective() : std::min(best, a.objective());
    }
  }
  state.counters["seeds"] = static_cast<double>(seeds.size());
  state.counters["objective_s"] = best;
}
BENCHMARK(BM_CdFromSeeds_GPT3_16x8)->Unit(benchmark::kMillisecond);

void BM_SearchCd_GPT3_16x8(benchmark::State& state) {
  gpt3();
  SearchOptions o;
  o.mesh_shape = {16, 8};
  o.jobs = static_cast<int>(state.range(0));
  double found = 0;
  for (auto _ : state) found = iteration_of(run_search(gpt3(), a100x128(), o, {"cd"}), "cd");
  state.counters["cd_iteration_s"] = found;
}
BENCHMARK(BM_SearchCd_GPT3_16x8)->Unit(benchmark::kSecond)->Iterations(1)->Arg(1)->Arg(2);

void BM_SearchDefault_GPT3_128(benchmark::State& state) {
  gpt3();
  SearchOptions o;
  o.jobs = static_cast<int>(state.range(0));
  double found = 0, expert = 0;
  for (auto _ : state) {
    const SearchRun run = run_search(gpt3(), a100x128(), o, default_methods());
    found = run.results.front().report.iteration_s;
    expert = iteration_of(run, "megatron");
  }
  state.counters["best_iteration_s"] = found;
  state.counters["megatron_iteration_s"] = expert;
}
BENCHMARK(BM_SearchDefault_GPT3_128)->Unit(benchmark::kSecond)->Iterations(1)->Arg(1)->Arg(2);

void BM_SearchCdExpert_GPT3_128(benchmark::State& state) {
  gpt3();
  double found = 0, expert = 0;
  for (auto _ : state) {
    const SearchRun run = run_search(gpt3(), a100x128(), SearchOptions{}, {"cd-expert", "megatron"});
    found = iteration_of(run, "cd-expert");
    expert = iteration_of(run, "megatron");
  }
  state.counters["cd_expert_iteration_s"] = found;
  state.counters["megatron_iteration_s"] = expert;
}
BENCHMARK(BM_SearchCdExpert_GPT3_128)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
