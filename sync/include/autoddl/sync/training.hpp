// Training and evaluating rankers on dataset records (`autoddl sync train|eval|transfer`):
// records read back from DIR/records.jsonl (dataset.hpp), one list per (model, cluster) pair,
// a deterministic held-out split of the strategies inside each list (so held-out accuracy is
// measured on the same pairs the ranker trained on), and rankers chosen by name or by model file.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autoddl/sync/ranker.hpp"

namespace autoddl::sync {

struct LabeledRecord {
  std::string pair;   // "vgg16@autosync-a"
  int index = 0;      // the record's index in its pair
  std::string builder;
  std::vector<double> features;
  double runtime_s = 0;
};

// DIR/records.jsonl; throws InputError naming it when it does not exist.
std::string records_path(const std::string& dir);

// A record's identity: its "pair" and "index", checked against its "key", which must be
// "<pair>#<index>" (the key is what a resumed `sync dataset` trusts, the pair and index what
// training groups by: a record whose fields disagree would be skipped by one and used by the
// other). Throws InputError(path, "line N: <field>", reason).
struct RecordId {
  std::string key, pair;
  int index = 0;
};
RecordId record_id(const nlohmann::json& record, const std::string& path, int64_t line_no);

// The zoo knobs a record's model was built with: its "knobs" object, every value a string ({}
// when the record has none). Throws InputError(path, "<where>: knobs[.k]", reason).
std::map<std::string, std::string> record_knobs(const nlohmann::json& record, const std::string& path,
                                                const std::string& where);

// Reads DIR/records.jsonl of every DIR (records with the same key kept once, in file order).
// Throws InputError("<dir>/records.jsonl", "line N: <field>", reason) on a malformed record,
// one whose key disagrees with its pair and index, or a feature vector whose length is not
// feature_names().size(). A torn last line (an interrupted `sync dataset`, costmodel/jsonl.hpp)
// is left out and `note` called with one line saying so. With `pairs` (pair_matches patterns,
// below), only the records of matching pairs: the others are skipped unparsed, so a sweep cell
// that needs two pairs does not parse the whole dataset.
std::vector<LabeledRecord> read_records(const std::vector<std::string>& dirs, const std::string& pairs = "",
                                        const std::function<void(const std::string&)>& note = {});

// Samples with one list per distinct pair (list ids in sorted pair order).
std::vector<RankSample> to_samples(const std::vector<LabeledRecord>& records);

// Splits each pair's records: a fraction `holdout` of them (rounded, at least 1 when the pair
// has >= 2 records and holdout > 0), chosen by a shuffle seeded by (seed, pair), goes to `test`.
void split_within_pairs(const std::vector<LabeledRecord>& records, double holdout, uint64_t seed,
                        std::vector<LabeledRecord>& train, std::vector<LabeledRecord>& test);

// "linear" or "xgboost"; throws InputError(flag, "", reason) for any other name or an xgboost
// request in a build without libxgboost.
std::unique_ptr<Ranker> make_ranker(const std::string& name, uint64_t seed, const std::string& flag);
// Loads a model file saved by either ranker (the linear one is JSON with its format tag; any
// other file is given to XGBoost). `kind` receives "linear" or "xgboost" when not null.
std::unique_ptr<Ranker> load_ranker(const std::string& path, std::string* kind = nullptr);

// Metrics overall and per pair, over all pairs and over the pairs at least min_gap apart.
struct PairMetrics {
  RankMetrics all;
  std::map<std::string, RankMetrics> per_pair;
  double min_gap = 0;
  RankMetrics gap_all;
  std::map<std::string, RankMetrics> gap_per_pair;
};
// Default gap 5%: the simulator's per-transfer network jitter σ (simulated.hpp), which moves an
// all-reduce-bound iteration by about that much between runs.
inline constexpr double kDefaultMinGap = 0.05;
PairMetrics evaluate_ranker(const Ranker& r, const std::vector<LabeledRecord>& records,
                            double min_gap = kDefaultMinGap);
PairMetrics pair_metrics(const std::vector<LabeledRecord>& records, const std::vector<double>& scores,
                         double min_gap = kDefaultMinGap);

// Pair patterns: comma-separated "model@cluster" items, each side may be "*" ("*@autosync-b",
// "vgg16@*"); a pair matches if any item does.
bool pair_matches(const std::string& pair, const std::string& patterns);

}  // namespace autoddl::sync
