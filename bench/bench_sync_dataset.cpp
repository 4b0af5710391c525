// Records per second of `autoddl sync dataset` (issue 15: >= 10,000 records in < 30 minutes on
// the 2-core machine, i.e. >= 5.6 records/s). Each iteration writes a fresh dataset of
// `per_pair` records for every one of the 24 default (model, cluster) pairs with 2 jobs;
// items_per_second is records per second.
#include <benchmark/benchmark.h>

#include <filesystem>

#include "autoddl/sync/dataset.hpp"

#ifdef AUTODDL_SYNC_HAVE_SIM  // the dataset needs the simulator
namespace {

void BM_SyncDataset(benchmark::State& state) {
  namespace fs = std::filesystem;
  const auto pairs = autoddl::sync::default_dataset_pairs();
  autoddl::sync::DatasetOptions o;
  o.per_pair = static_cast<int>(state.range(0));
  o.jobs = 2;
  fs::path dir = fs::temp_directory_path() / "autoddl_bench_sync_dataset";
  int64_t records = 0;
  for (auto _ : state) {
    fs::remove_all(dir);
    records += autoddl::sync::write_dataset(dir.string(), pairs, o);
  }
  fs::remove_all(dir);
  state.SetItemsProcessed(records);
}
BENCHMARK(BM_SyncDataset)->Arg(12)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

}  // namespace
#endif
