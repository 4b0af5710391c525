// sync_rank and sync_transfer cells (sync_cells.hpp): held-out ranking metrics of a ranker trained
// on N trials of a pair, and of one trained on another pair (AutoSync §5.3), from dataset records.
#include "autoddl/experiments/sync_cells.hpp"

#include <algorithm>
#include <chrono>
#include <random>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/experiments/matrix.hpp"
#include "autoddl/sync/stable_hash.hpp"
#include "autoddl/sync/training.hpp"
#include "autoddl/sync/transfer.hpp"

namespace autoddl::experiments {

using nlohmann::json;

namespace {

json metrics_json(const sync::PairMetrics& m) {
  return {{"pairwise_accuracy", m.all.pairwise_accuracy}, {"kendall_tau", m.all.kendall_tau},
          {"top1_regret", m.all.top1_regret},             {"pairs", m.all.pairs},
          {"gap_pairwise_accuracy", m.gap_all.pairwise_accuracy}, {"gap_pairs", m.gap_all.pairs}};
}

// Whether the fastest record is among the k highest-scored (a score tie counts against it).
bool top_k_hit(const std::vector<sync::LabeledRecord>& records, const std::vector<double>& scores, int k) {
  size_t best = 0;
  for (size_t i = 1; i < records.size(); ++i) {
    if (records[i].runtime_s < records[best].runtime_s) best = i;
  }
  int above = 0;
  for (size_t i = 0; i < records.size(); ++i) above += i != best && scores[i] >= scores[best];
  return above < k;
}

// The records of the given pairs; each must have some.
std::vector<sync::LabeledRecord> pair_records(const std::string& data, const std::vector<std::string>& pairs) {
  std::string patterns;
  for (const std::string& p : pairs) patterns += (patterns.empty() ? "" : ",") + p;
  std::vector<sync::LabeledRecord> records = sync::read_records({data}, patterns);
  for (const std::string& p : pairs) {
    if (std::none_of(records.begin(), records.end(), [&](const auto& r) { return r.pair == p; })) {
      throw InputError(data + "/records.jsonl", p, "no records of this pair (write them with `autoddl sync dataset --pairs`)");
    }
  }
  return records;
}

// The first n of one pair's records in an order seeded by (seed, pair), so that the sets of a
// growing n are nested; `what` names them in the error when the pair has fewer.
std::vector<sync::LabeledRecord> seeded_prefix(std::vector<sync::LabeledRecord> records, const std::string& pair,
                                               uint64_t seed, int n, const std::string& data, const std::string& what) {
  std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
  std::mt19937_64 rng(seed ^ sync::stable_hash(pair) ^ 0x5bd1e995ull);
  std::shuffle(records.begin(), records.end(), rng);
  if (records.size() < static_cast<size_t>(n)) {
    throw InputError(data + "/records.jsonl", pair,
                     "has " + std::to_string(records.size()) + " records" + what + "; the cell trains on " +
                         std::to_string(n) + " (write more with `autoddl sync dataset --per-pair`)");
  }
  records.resize(static_cast<size_t>(n));
  return records;
}

json rank_cell(const json& in) {
  const json& o = in.at("options");
  const std::string data = o.at("data"), pair = dataset_pair_key(in), ranker = in.at("ranker");
  const int n = o.at("trials");
  const uint64_t seed = in.at("seed");
  std::vector<sync::LabeledRecord> records = pair_records(data, {pair}), rest, test;
  sync::split_within_pairs(records, o.at("holdout").get<double>(), seed, rest, test);
  const std::vector<sync::LabeledRecord> trials = seeded_prefix(rest, pair, seed, n, data, " besides the held-out ones");
  std::unique_ptr<sync::Ranker> r = sync::make_ranker(ranker, seed, "ranker");
  const auto t0 = std::chrono::steady_clock::now();
  r->fit(sync::to_samples(trials));
  const double fit_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::vector<double> scores = r->score(sync::to_samples(test));
  const sync::PairMetrics m = sync::pair_metrics(test, scores);
  return {{"pair", pair},           {"records", records.size()}, {"trials", n},
          {"held_out", test.size()}, {"min_gap", m.min_gap},      {"held_out_metrics", metrics_json(m)},
          {"top5_hit", top_k_hit(test, scores, 5)}, {"fit_s", fit_s}};
}

json transfer_cell(const json& in) {
  const json& o = in.at("options");
  const std::string data = o.at("data"), test = dataset_pair_key(in), train = in.at("train"), ranker = in.at("ranker");
  const int finetune = o.at("finetune"), train_trials = o.at("train_trials");
  const uint64_t seed = in.at("seed");
  std::vector<sync::LabeledRecord> records = pair_records(data, {train, test});
  if (train_trials > 0) {  // the trained-on pair's first train_trials records only
    std::vector<sync::LabeledRecord> source, target;
    for (auto& r : records) (r.pair == train ? source : target).push_back(std::move(r));
    records = seeded_prefix(std::move(source), train, seed, train_trials, data, "");
    records.insert(records.end(), target.begin(), target.end());
  }
  const sync::TransferResult t = sync::transfer(records, train, test, finetune, ranker, seed);
  json j = {{"train_pair", train},          {"test_pair", test},
            {"train_records", t.train_records}, {"finetune_records", t.finetune_records},
            {"test_records", t.test_records},   {"min_gap", t.transferred.min_gap},
            {"transferred", metrics_json(t.transferred)}};
  if (finetune >= 2) {
    j["target_only"] = metrics_json(t.target_only);
    j["ensemble"] = metrics_json(t.ensemble);
    j["finetuned"] = metrics_json(t.finetuned);
  }
  return j;
}

}  // namespace

json run_sync_learning_cell(const json& in) {
  const std::string task = in.at("task");
  if (task == "sync_rank") return {{task, rank_cell(in)}};
  if (task == "sync_transfer") return {{task, transfer_cell(in)}};
  throw InputError("sync cell", "task", "not a sync_rank or sync_transfer cell: " + task);
}

}  // namespace autoddl::experiments
