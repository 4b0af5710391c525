// Whole searches on issue 11's production case: GPT-3 175B (96 layers, hidden 12288, 96 heads,
// seq 2048, vocab 51200, global batch 1024) on 128 A100 (dgx-a100, 16 nodes), as `autoddl search`
// runs them: `cd` on the fixed [16, 8] mesh (configuration probes, descent from every seed, each
// end point judged by evaluate()), and `cd-expert` with the `megatron` baseline on the default
// mesh (one walk of the Megatron-LM grid, descent from its best points). One iteration each;
// counters: the iteration seconds found, and for cd-expert the best grid point's.
#include <benchmark/benchmark.h>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/zoo.hpp"
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

void BM_SearchCd_GPT3_16x8(benchmark::State& state) {
  gpt3();
  SearchOptions o;
  o.mesh_shape = {16, 8};
  double found = 0;
  for (auto _ : state) found = iteration_of(run_search(gpt3(), a100x128(), o, {"cd"}), "cd");
  state.counters["cd_iteration_s"] = found;
}
BENCHMARK(BM_SearchCd_GPT3_16x8)->Unit(benchmark::kSecond)->Iterations(1);

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
