// Records per second of `autoddl sync dataset` (issue 15: >= 10,000 records in < 30 minutes on
// the 2-core machine, i.e. >= 5.6 records/s). Each iteration writes a fresh dataset of
// `per_pair` records for every one of the 24 default (model, cluster) pairs with 2 jobs and
// `runs` simulated runs per record; items_per_second is records per wall second, and
// records_per_cpu_s records per CPU second (user + system of this process and of the forked
// simulations), which a machine shared with other work inflates less than wall time.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <filesystem>

#include "autoddl/sync/dataset.hpp"

#ifdef AUTODDL_SYNC_HAVE_SIM  // the dataset needs the simulator
namespace {

double cpu_s() {
  double total = 0;
  for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    rusage u{};
    getrusage(who, &u);
    total += static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
             static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
  }
  return total;
}

void BM_SyncDataset(benchmark::State& state) {
  namespace fs = std::filesystem;
  const auto pairs = autoddl::sync::default_dataset_pairs();
  autoddl::sync::DatasetOptions o;
  o.per_pair = static_cast<int>(state.range(0));
  o.runs = static_cast<int>(state.range(1));
  o.jobs = 2;
  fs::path dir = fs::temp_directory_path() / "autoddl_bench_sync_dataset";
  int64_t records = 0;
  double cpu = 0;
  for (auto _ : state) {
    fs::remove_all(dir);
    const double before = cpu_s();
    records += autoddl::sync::write_dataset(dir.string(), pairs, o);
    cpu += cpu_s() - before;
  }
  fs::remove_all(dir);
  state.SetItemsProcessed(records);
  state.counters["records_per_cpu_s"] = cpu > 0 ? static_cast<double>(records) / cpu : 0;
  state.counters["cpu_s"] = cpu;
}
BENCHMARK(BM_SyncDataset)->Args({12, 1})->Args({12, 3})->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

}  // namespace
#endif
