// The low-shot search on the tiny model: never slower than the best builder, the trial budget
// counts sampled runs, the same seed gives the same search for any number of jobs, another seed
// another search, bad options are input errors, and a pretrained model file is used.
#ifdef AUTODDL_SYNC_HAVE_SIM
#include "autoddl/sync/lowshot.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

#include "autoddl/sync/analytical.hpp"
#include "autoddl/sync/builders.hpp"
#include "autoddl/sync/compression.hpp"
#include "autoddl/sync/features.hpp"
#include "autoddl/sync/ranker.hpp"
#include "autoddl/sync/strategy_json.hpp"
#include "tiny.hpp"

using namespace autoddl::sync;

namespace {
LowShotOptions small_options() {
  LowShotOptions o;
  o.trials = 24;
  o.per_round = 6;
  o.explore = 40;
  o.repeats = 2;
  o.seed = 11;
  return o;
}
}  // namespace

TEST_CASE("low-shot search: never slower than the best builder, deterministic for a seed",
          "[sync][lowshot]") {
  autoddl::costmodel::Graph g = test::tiny_model(true);
  // slow NIC so that synchronization matters next to compute
  autoddl::costmodel::ClusterSpec c = test::test_cluster(3, 2, 1e8, 1e-5, 1e12);
  std::vector<Variable> vars = extract_variables(g);
  LowShotOptions o = small_options();
  LowShotResult a = low_shot_search(g, vars, c, o);
  CHECK(a.builders == static_cast<int>(builders().size()));
  CHECK(a.runs.size() == builders().size() + 24);
  CHECK(a.rounds == 4);
  CHECK(a.best_s <= a.best_builder_s);
  for (const LowShotFinal& f : a.finals) CHECK(a.best_s <= f.mean_s);
  // every builder, the 3 fastest sampled runs and the 3 fastest uncompressed ones (some may be
  // among the first 3)
  CHECK(a.finals.size() >= builders().size() + 3);
  CHECK(a.finals.size() <= builders().size() + 6);
  // Same options: the best builder is the fastest of all, fp16 ones included.
  for (const LowShotFinal& f : a.finals) {
    if (f.builder) CHECK(a.best_builder_s <= f.mean_s);
  }
  // Compression off: the fastest final and the fastest builder without a lossy compressor.
  REQUIRE(a.best_plain >= 0);
  const LowShotFinal& plain = a.finals[static_cast<size_t>(a.best_plain)];
  CHECK_FALSE(plain.compressed);
  CHECK_FALSE(uses_compression(a.runs[static_cast<size_t>(plain.run)].strategy, vars));
  CHECK(a.best_plain_builder_s >= plain.mean_s);  // the builders are among the finals
  for (const LowShotFinal& f : a.finals) {
    CHECK(f.compressed == uses_compression(a.runs[static_cast<size_t>(f.run)].strategy, vars));
    if (f.compressed) continue;
    CHECK(plain.mean_s <= f.mean_s);
    if (f.builder) CHECK(a.best_plain_builder_s <= f.mean_s);
  }
  CHECK(a.best_plain_builder != "horovod-fp16");
  CHECK(a.best_plain_builder != "ddp-fp16");
  // The trial curve: one point per sampled trial, never above the best builder's mean, ending
  // at the reported best (so the plotted curve ends at the reported speedup). It may rise: a
  // faster single run can push a run with a lower mean out of the final selection.
  REQUIRE(a.trial_curve_s.size() == a.runs.size() - builders().size());
  for (double t : a.trial_curve_s) CHECK(t <= a.best_builder_s);
  CHECK(a.trial_curve_s.back() == a.best_s);
  validate_strategy(a.best, vars, c, "best");
  // every run, sampled or a neighbour of a fast one, is a valid strategy
  for (const LowShotRun& r : a.runs) CHECK_NOTHROW(validate_strategy(r.strategy, vars, c, r.source));

  o.jobs = 2;
  LowShotResult b = low_shot_search(g, vars, c, o);
  REQUIRE(b.runs.size() == a.runs.size());
  for (size_t i = 0; i < a.runs.size(); ++i) {
    CHECK(a.runs[i].runtime_s == b.runs[i].runtime_s);
    CHECK(a.runs[i].strategy == b.runs[i].strategy);
  }
  CHECK(a.best == b.best);
  CHECK(a.best_s == b.best_s);

  o.seed = 12;
  LowShotResult other = low_shot_search(g, vars, c, o);
  CHECK_FALSE(other.runs.back().strategy == a.runs.back().strategy);
}

TEST_CASE("low-shot search: bad options are input errors", "[sync][lowshot]") {
  autoddl::costmodel::Graph g = test::tiny_model(false);
  autoddl::costmodel::ClusterSpec c = test::test_cluster(2, 1);
  std::vector<Variable> vars = extract_variables(g);
  LowShotOptions o = small_options();
  o.ranker = "forest";
  CHECK_THROWS_WITH(low_shot_search(g, vars, c, o), Catch::Contains("--ranker"));
  o = small_options();
  o.trials = 0;
  CHECK_THROWS_WITH(low_shot_search(g, vars, c, o), Catch::Contains("--trials"));
}
#endif

#ifdef AUTODDL_SYNC_HAVE_SIM
TEST_CASE("low-shot search: a pretrained ranker file ranks the first round", "[sync][lowshot]") {
  autoddl::costmodel::Graph g = test::tiny_model(true);
  autoddl::costmodel::ClusterSpec c = test::test_cluster(3, 2, 1e8, 1e-5, 1e12);
  std::vector<Variable> vars = extract_variables(g);
  LowShotOptions o = small_options();
  std::string path = (std::filesystem::temp_directory_path() / "autoddl_lowshot_pretrained.json").string();
  {
    // a "pretrained" model: a linear ranker fitted on one search's runs
    LowShotResult first = low_shot_search(g, vars, c, o);
    std::vector<RankSample> data;
    for (const LowShotRun& r : first.runs) {
      Evaluation e = evaluate_analytical(g, vars, r.strategy, c);
      data.push_back({strategy_features(vars, r.strategy, e, c), r.runtime_s, 0});
    }
    auto model = make_linear_ranker();
    model->fit(data);
    model->save(path);
  }
  o.pretrained = path;
  o.seed = 21;
  LowShotResult r = low_shot_search(g, vars, c, o);
  CHECK(r.best_s <= r.best_builder_s);
  CHECK(r.runs.size() == builders().size() + 24);
  std::filesystem::remove(path);
  o.pretrained = path;  // now missing
  CHECK_THROWS_WITH(low_shot_search(g, vars, c, o), Catch::Contains("cannot open"));
}
#endif
