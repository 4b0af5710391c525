// The low-shot search on the tiny model: never slower than the best builder, the trial budget
// counts sampled runs, the same seed gives the same search for any number of jobs, another seed
// another search, bad options are input errors, and a pretrained model file is used.
#ifdef AUTODDL_SYNC_HAVE_SIM
#include "autoddl/sync/lowshot.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <map>

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
  // per process: another checkout's tests may run this case at the same time in the same /tmp
  std::string path = (std::filesystem::temp_directory_path() /
                      ("autoddl_lowshot_pretrained." + std::to_string(getpid()) + ".json")).string();
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
  CHECK(r.round_stats[0].ranked_by == "pretrained");
  CHECK(r.round_stats[1].ranked_by == "linear+pretrained");  // the ensemble
  // --transfer finetune: later rounds rank by the pretrained model trained on the runs so far.
  o.transfer = "finetune";
  LowShotResult ft = low_shot_search(g, vars, c, o);
  CHECK(ft.round_stats[0].ranked_by == "pretrained");
  CHECK(ft.round_stats[1].ranked_by == "pretrained fine-tuned");
  CHECK(ft.runs.size() == r.runs.size());
  CHECK(ft.ranker_accuracy_on_picks >= 0);
  o.transfer = "ensemble";
  std::filesystem::remove(path);
  o.pretrained = path;  // now missing
  CHECK_THROWS_WITH(low_shot_search(g, vars, c, o), Catch::Contains("cannot open"));
}
#endif

#ifdef AUTODDL_SYNC_HAVE_SIM
// Issue 32 item 4's arms: the same candidates, picked by the learned ranker, at random, or by the
// analytical evaluator; every round records what ranked it and how well the scores ordered the picks.
TEST_CASE("low-shot search arms: same budget and different picks with each round recorded", "[sync][lowshot]") {
  autoddl::costmodel::Graph g = test::tiny_model(true);
  autoddl::costmodel::ClusterSpec c = test::test_cluster(3, 2, 1e8, 1e-5, 1e12);
  std::vector<Variable> vars = extract_variables(g);
  LowShotOptions o = small_options();
  std::map<std::string, LowShotResult> r;
  for (const char* arm : {"ranker", "random", "analytical"}) {
    o.arm = arm;
    r[arm] = low_shot_search(g, vars, c, o);
    INFO(arm);
    CHECK(r[arm].runs.size() == builders().size() + 24);  // equal trials
    REQUIRE(r[arm].round_stats.size() == static_cast<size_t>(r[arm].rounds));
    for (const LowShotRound& st : r[arm].round_stats) {
      CHECK(st.picked == 6);
      CHECK(st.candidates >= st.picked);
      CHECK((st.accuracy == -1 || (st.accuracy >= 0 && st.accuracy <= 1)));
      CHECK(st.best_so_far_s <= st.round_best_s);
    }
  }
  const size_t b = builders().size();
  auto round_picks = [&](const LowShotResult& x, int round) {
    std::vector<Strategy> s;
    for (const LowShotRun& run : x.runs)
      if (run.round == round) s.push_back(run.strategy);
    return s;
  };
  // Round 1: the ranker arm ranks by the analytical evaluator, as the analytical arm does (the
  // same candidates, so the same picks); random picks others.
  CHECK(round_picks(r["ranker"], 1) == round_picks(r["analytical"], 1));
  CHECK_FALSE(round_picks(r["random"], 1) == round_picks(r["analytical"], 1));
  CHECK(r["ranker"].runs[b].strategy == r["analytical"].runs[b].strategy);
  // What ranked each round.
  CHECK(r["ranker"].round_stats[0].ranked_by == "analytical");
  CHECK(r["ranker"].round_stats[1].ranked_by == "linear");
  CHECK(r["ranker"].round_stats[1].scored_by == "linear");
  for (const LowShotRound& st : r["analytical"].round_stats) CHECK(st.ranked_by == "analytical");
  for (const LowShotRound& st : r["random"].round_stats) CHECK(st.ranked_by == "random");
  // Random round 1 has no scores to judge; later rounds the shadow ranker's.
  CHECK(r["random"].round_stats[0].accuracy == -1);
  CHECK(r["random"].round_stats[0].scored_by.empty());
  CHECK(r["random"].round_stats[1].scored_by == "linear");
  // Pooled accuracy: over learned rounds only, so none in the analytical arm.
  CHECK(r["analytical"].ranker_accuracy_on_picks == -1);
  CHECK(r["ranker"].ranker_accuracy_on_picks >= 0);
  CHECK(r["random"].ranker_accuracy_on_picks >= 0);
  // Bad arms and a pretrained model outside the ranker arm are input errors.
  o.arm = "greedy";
  CHECK_THROWS_WITH(low_shot_search(g, vars, c, o), Catch::Contains("--arm"));
  o.arm = "random";
  o.pretrained = "model.json";
  CHECK_THROWS_WITH(low_shot_search(g, vars, c, o), Catch::Contains("--pretrained"));
  o.arm = "ranker";
  o.pretrained.clear();
  o.transfer = "mix";
  CHECK_THROWS_WITH(low_shot_search(g, vars, c, o), Catch::Contains("--transfer"));
}
#endif
