// Transfer across pairs (transfer.hpp).
#include "autoddl/sync/transfer.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/sync/stable_hash.hpp"

namespace autoddl::sync {

namespace {

// Standardized within each list (pair), so that scores of two rankers can be added.
std::vector<double> zscores_per_list(const std::vector<RankSample>& s, std::vector<double> v) {
  std::map<int, std::vector<size_t>> lists;
  for (size_t i = 0; i < s.size(); ++i) lists[s[i].list].push_back(i);
  for (const auto& [id, m] : lists) {
    double mean = 0, var = 0;
    for (size_t i : m) mean += v[i];
    mean /= static_cast<double>(m.size());
    for (size_t i : m) var += (v[i] - mean) * (v[i] - mean);
    const double sd = std::sqrt(var / static_cast<double>(m.size()));
    for (size_t i : m) v[i] = sd > 0 ? (v[i] - mean) / sd : 0;
  }
  return v;
}

}  // namespace

TransferResult transfer(const std::vector<LabeledRecord>& records, const std::string& train_patterns,
                        const std::string& test_patterns, int finetune, const std::string& ranker,
                        uint64_t seed) {
  if (finetune < 0) throw InputError("--finetune", "", "must be >= 0");
  TransferResult res;
  std::vector<LabeledRecord> train;
  std::map<std::string, std::vector<LabeledRecord>> test_by_pair;
  std::set<std::string> train_pairs;
  for (const LabeledRecord& r : records) {
    const bool tr = pair_matches(r.pair, train_patterns), te = pair_matches(r.pair, test_patterns);
    if (tr && te) throw InputError("--test", "", "pair " + r.pair + " is also in --train");
    if (tr) {
      train.push_back(r);
      train_pairs.insert(r.pair);
    }
    if (te) test_by_pair[r.pair].push_back(r);
  }
  if (train.empty()) throw InputError("--train", "", "matches no pair of the data");
  if (test_by_pair.empty()) throw InputError("--test", "", "matches no pair of the data");
  std::vector<LabeledRecord> tune, eval;
  for (auto& [pair, members] : test_by_pair) {
    std::sort(members.begin(), members.end(),
              [](const LabeledRecord& a, const LabeledRecord& b) { return a.index < b.index; });
    std::mt19937_64 rng(seed ^ stable_hash(pair) ^ 0x7f4a7c15ull);
    std::shuffle(members.begin(), members.end(), rng);
    if (static_cast<size_t>(finetune) + 2 > members.size())
      throw InputError("--finetune", "", "pair " + pair + " has only " + std::to_string(members.size()) +
                                             " records; keep at least 2 for testing");
    tune.insert(tune.end(), members.begin(), members.begin() + finetune);
    eval.insert(eval.end(), members.begin() + finetune, members.end());
    res.test_pairs.push_back(pair);
  }
  res.train_pairs.assign(train_pairs.begin(), train_pairs.end());
  res.train_records = train.size();
  res.finetune_records = tune.size();
  res.test_records = eval.size();

  std::vector<RankSample> eval_samples = to_samples(eval);
  auto source = make_ranker(ranker, seed, "--ranker");
  source->fit(to_samples(train));
  std::vector<double> zero_shot = source->score(eval_samples);
  res.transferred = pair_metrics(eval, zero_shot);
  if (finetune >= 2) {
    auto target = make_ranker(ranker, seed, "--ranker");
    target->fit(to_samples(tune));
    std::vector<double> own = target->score(eval_samples);
    res.target_only = pair_metrics(eval, own);
    std::vector<double> a = zscores_per_list(eval_samples, zero_shot), b = zscores_per_list(eval_samples, own);
    for (size_t i = 0; i < a.size(); ++i) a[i] += b[i];
    res.ensemble = pair_metrics(eval, a);
    source->fine_tune(to_samples(tune));
    res.finetuned = pair_metrics(eval, source->score(eval_samples));
  }
  return res;
}

}  // namespace autoddl::sync
