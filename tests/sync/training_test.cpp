// Training on dataset records: a constructed dataset written as records.jsonl (runtime grows
// with one feature, the rest is noise) is read back, split within pairs deterministically, and
// both rankers order the held-out strategies perfectly; pair patterns; malformed records;
// transfer from some pairs to another.
#include "autoddl/sync/training.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <random>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/sync/features.hpp"
#include "autoddl/sync/transfer.hpp"

using namespace autoddl::sync;
namespace fs = std::filesystem;

namespace {
// 3 pairs x 40 records; feature 13 (analytical_iteration_s) a permutation of 1..40, features
// 0-2 uniform noise, the rest constant (cluster figures and the like are the same in a list).
fs::path constructed_dataset(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream out(dir / "records.jsonl");
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> noise(0, 1);
  for (const char* pair : {"a@x", "b@x", "a@y"}) {
    std::vector<int> perm(40);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    for (int i = 0; i < 40; ++i) {
      std::vector<double> f(feature_names().size());
      for (size_t k = 0; k < f.size(); ++k) f[k] = k < 3 ? noise(rng) : 1.0;
      f[13] = 1 + perm[static_cast<size_t>(i)];
      nlohmann::json r = {{"key", std::string(pair) + "#" + std::to_string(i)}, {"pair", pair}, {"index", i},
                          {"builder", "sampled"}, {"features", f}, {"runtime_s", 1 + 0.01 * perm[static_cast<size_t>(i)]}};
      out << r.dump() << "\n";
    }
  }
  return dir;
}
}  // namespace

TEST_CASE("records read back, filtered by pair patterns, split within pairs deterministically", "[sync][training]") {
  fs::path dir = constructed_dataset("autoddl_training_split");
  std::vector<LabeledRecord> records = read_records({dir.string()});
  REQUIRE(records.size() == 120);
  std::vector<LabeledRecord> train, test, train2, test2;
  split_within_pairs(records, 0.25, 3, train, test);
  CHECK(test.size() == 30);  // 10 of each pair's 40
  CHECK(train.size() == 90);
  std::map<std::string, int> held;
  for (const LabeledRecord& r : test) held[r.pair] += 1;
  CHECK(held == std::map<std::string, int>{{"a@x", 10}, {"a@y", 10}, {"b@x", 10}});
  split_within_pairs(records, 0.25, 3, train2, test2);
  REQUIRE(test2.size() == test.size());
  for (size_t i = 0; i < test.size(); ++i) CHECK(test[i].index == test2[i].index);
  // reading the same directory twice keeps each record once
  CHECK(read_records({dir.string(), dir.string()}).size() == 120);
  // with pair patterns, the matching pairs' records only
  std::vector<LabeledRecord> a = read_records({dir.string()}, "a@*");
  CHECK(a.size() == 80);
  CHECK(std::all_of(a.begin(), a.end(), [](const LabeledRecord& r) { return r.pair == "a@x" || r.pair == "a@y"; }));
  CHECK(read_records({dir.string()}, "b@x,a@y").size() == 80);
  CHECK(read_records({dir.string()}, "c@x").empty());
  fs::remove_all(dir);
}

TEST_CASE("rankers trained on records order held-out strategies of the same pairs (linear: perfectly)",
          "[sync][training]") {
  fs::path dir = constructed_dataset("autoddl_training_fit");
  std::vector<LabeledRecord> train, test;
  split_within_pairs(read_records({dir.string()}), 0.25, 1, train, test);
  std::vector<std::string> kinds = {"linear"};
#ifdef AUTODDL_SYNC_HAVE_XGBOOST
  kinds.push_back("xgboost");
#endif
  for (const std::string& kind : kinds) {
    INFO(kind);
    auto r = make_ranker(kind, 1, "--ranker");
    r->fit(to_samples(train));
    CHECK(evaluate_ranker(*r, train).all.pairwise_accuracy == 1.0);
    PairMetrics m = evaluate_ranker(*r, test);
    // linear: exact; trees put unseen values between two split points in one leaf (a tie)
    const double floor = kind == "linear" ? 1.0 : 0.95;
    CHECK(m.all.pairwise_accuracy >= floor);
    CHECK(m.all.top1_regret == 0.0);
    CHECK(m.per_pair.size() == 3);
    std::string path = (dir / ("model." + kind)).string();
    r->save(path);
    std::string loaded_kind;
    auto back = load_ranker(path, &loaded_kind);
    CHECK(loaded_kind == kind);
    CHECK(evaluate_ranker(*back, test).all.pairwise_accuracy == m.all.pairwise_accuracy);
  }
  fs::remove_all(dir);
}

TEST_CASE("pair patterns", "[sync][training]") {
  CHECK(pair_matches("vgg16@autosync-a", "vgg16@autosync-a"));
  CHECK(pair_matches("vgg16@autosync-a", "*@autosync-a"));
  CHECK(pair_matches("vgg16@autosync-a", "ncf@*,vgg16@*"));
  CHECK(pair_matches("vgg16@autosync-a", "vgg16"));
  CHECK_FALSE(pair_matches("vgg16@autosync-a", "*@autosync-b"));
  CHECK_FALSE(pair_matches("bert[size=large]@autosync-a", "bert"));
  CHECK(pair_matches("bert[size=large]@autosync-a", "bert[size=large]@*"));
}

TEST_CASE("malformed records name the file, the line and the field", "[sync][training]") {
  fs::path dir = fs::temp_directory_path() / "autoddl_training_bad";
  fs::remove_all(dir);
  fs::create_directories(dir);
  {
    std::ofstream out(dir / "records.jsonl");
    out << R"({"key":"a@x#0","pair":"a@x","index":0,"features":[1,2],"runtime_s":1})" << "\n";
  }
  CHECK_THROWS_WITH(read_records({dir.string()}), Catch::Contains("records.jsonl: line 1: features"));
  CHECK_THROWS_WITH(read_records({(dir / "nope").string()}), Catch::Contains("cannot open"));
  CHECK_THROWS_WITH(make_ranker("forest", 1, "--ranker"), Catch::Contains("--ranker: unknown ranker"));
  fs::remove_all(dir);
}

namespace {
// The constructed dataset's records.jsonl with line `n` (from 1) replaced by `text`, or the last
// line torn (cut to half, no newline) when n is 0.
fs::path edited_dataset(const std::string& name, int n, const std::string& text) {
  fs::path dir = constructed_dataset(name);
  std::vector<std::string> lines;
  {
    std::ifstream in(dir / "records.jsonl");
    for (std::string l; std::getline(in, l);) lines.push_back(l);
  }
  std::ofstream out(dir / "records.jsonl", std::ios::trunc);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (n == 0 && i + 1 == lines.size()) out << lines[i].substr(0, lines[i].size() / 2);
    else out << (static_cast<int>(i) + 1 == n ? text : lines[i]) << "\n";
  }
  return dir;
}
}  // namespace

TEST_CASE("a torn last line is left out with a note, a bad line elsewhere is an error naming it", "[sync][training]") {
  fs::path dir = edited_dataset("autoddl_training_torn", 0, "");
  std::vector<std::string> notes;
  CHECK(read_records({dir.string()}, "", [&](const std::string& n) { notes.push_back(n); }).size() == 119);
  CHECK(notes == std::vector<std::string>{(dir / "records.jsonl").string() +
                                          ": line 120: torn by an interrupted write (a kill) and left out; "
                                          "its record is not used"});
  fs::remove_all(dir);

  dir = edited_dataset("autoddl_training_middle", 20, R"({"key":"a@x#19","pair":"a@x","ind)");
  CHECK_THROWS_WITH(read_records({dir.string()}), Catch::Contains("records.jsonl: line 20: malformed JSON"));
  fs::remove_all(dir);
}

TEST_CASE("a record whose key disagrees with its pair and index is refused, not trained on", "[sync][training]") {
  // Line 12 is a@x#11; its index says 12, so training would see index 12 twice and 11 never.
  std::vector<double> f(feature_names().size(), 1.0);
  const nlohmann::json r = {{"key", "a@x#11"}, {"pair", "a@x"}, {"index", 12}, {"features", f}, {"runtime_s", 1.0}};
  fs::path dir = edited_dataset("autoddl_training_key", 12, r.dump());
  CHECK_THROWS_WITH(read_records({dir.string()}),
                    Catch::StartsWith((dir / "records.jsonl").string() +
                                      ": line 12: key: 'a@x#11' disagrees with the record's pair and index ('a@x#12')"));
  fs::remove_all(dir);
}

TEST_CASE("the gap metric leaves out pairs closer than the noise", "[sync][training]") {
  // runtimes 1.00, 1.01 (1% apart) and 2.00; the scores order the close pair wrongly
  std::vector<LabeledRecord> r(3);
  for (int i = 0; i < 3; ++i) {
    r[static_cast<size_t>(i)].pair = "a@x";
    r[static_cast<size_t>(i)].index = i;
    r[static_cast<size_t>(i)].features.assign(feature_names().size(), 0.0);
  }
  r[0].runtime_s = 1.00;
  r[1].runtime_s = 1.01;
  r[2].runtime_s = 2.00;
  PairMetrics m = pair_metrics(r, {2, 3, 1}, 0.05);
  CHECK(m.all.pairs == 3);
  CHECK(m.all.pairwise_accuracy == Approx(2.0 / 3));
  CHECK(m.gap_all.pairs == 2);
  CHECK(m.gap_all.pairwise_accuracy == 1.0);
  CHECK(m.all.top1_regret == Approx(0.01));
}

TEST_CASE("transfer: trained on some pairs, tested on another, fine-tuning on target trials",
          "[sync][training][transfer]") {
  fs::path dir = constructed_dataset("autoddl_training_transfer");
  std::vector<LabeledRecord> records = read_records({dir.string()});
  // the order is the same function of the features in every pair, so it transfers exactly
  TransferResult t = transfer(records, "*@x", "*@y", 10, "linear", 1);
  CHECK(t.train_pairs == std::vector<std::string>{"a@x", "b@x"});
  CHECK(t.test_pairs == std::vector<std::string>{"a@y"});
  CHECK(t.train_records == 80);
  CHECK(t.finetune_records == 10);
  CHECK(t.test_records == 30);
  CHECK(t.transferred.all.pairwise_accuracy == 1.0);
  CHECK(t.transferred.all.pairs == 30 * 29 / 2);
  // 10 target trials alone fit the noise features a little; the sum with the source model is
  // at least as good as they are
  CHECK(t.finetuned.all.pairwise_accuracy >= 0.99);
  CHECK(t.finetuned.all.pairwise_accuracy >= t.target_only.all.pairwise_accuracy);
  CHECK(t.target_only.all.pairs == t.transferred.all.pairs);  // scored on the same records
  // the same seed draws the same target trials
  CHECK(transfer(records, "*@x", "*@y", 10, "linear", 1).target_only.all.pairwise_accuracy ==
        t.target_only.all.pairwise_accuracy);
  CHECK_THROWS_WITH(transfer(records, "a@*", "*@y", 0, "linear", 1), Catch::Contains("a@y is also in --train"));
  CHECK_THROWS_WITH(transfer(records, "c@*", "*@y", 0, "linear", 1), Catch::Contains("--train: matches no pair"));
  CHECK_THROWS_WITH(transfer(records, "*@x", "*@y", 39, "linear", 1), Catch::Contains("--finetune"));
  fs::remove_all(dir);
}
