// Records, splits and ranker selection for training (training.hpp).
#include "autoddl/sync/training.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <random>
#include <set>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/jsonl.hpp"
#include "autoddl/sync/features.hpp"
#include "autoddl/sync/stable_hash.hpp"

namespace autoddl::sync {

namespace {

LabeledRecord parse_record(const std::string& line, const std::string& path, int64_t line_no) {
  const std::string where = "line " + std::to_string(line_no);
  // The strategy (most of a record's bytes) is not a training input: dropped while parsing.
  static const nlohmann::json::parser_callback_t skip_strategy = [](int depth, nlohmann::json::parse_event_t event,
                                                                    nlohmann::json& parsed) {
    return !(depth == 1 && event == nlohmann::json::parse_event_t::key && parsed == "strategy");
  };
  nlohmann::json j = nlohmann::json::parse(line, skip_strategy, false);
  if (j.is_discarded() || !j.is_object()) throw InputError(path, where, "malformed JSON");
  auto need = [&](const char* key, bool ok) {
    if (!j.contains(key)) throw InputError(path, where + ": " + key, "missing");
    if (!ok) throw InputError(path, where + ": " + key, "wrong type");
  };
  const RecordId id = record_id(j, path, line_no);
  if (j.contains("builder") && !j["builder"].is_string()) throw InputError(path, where + ": builder", "wrong type");
  need("features", j.contains("features") && j["features"].is_array());
  need("runtime_s", j.contains("runtime_s") && j["runtime_s"].is_number());
  LabeledRecord r;
  r.pair = id.pair;
  r.index = id.index;
  r.builder = j.value("builder", "");
  for (const nlohmann::json& v : j["features"]) {
    if (!v.is_number()) throw InputError(path, where + ": features", "must be numbers");
    r.features.push_back(v.get<double>());
  }
  if (r.features.size() != feature_names().size())
    throw InputError(path, where + ": features",
                     "has " + std::to_string(r.features.size()) + " values, this autoddl expects " +
                         std::to_string(feature_names().size()) + " (a dataset from another version? `autoddl sync dataset --out DIR --refeature` recomputes them)");
  r.runtime_s = j["runtime_s"].get<double>();
  if (!(r.runtime_s > 0)) throw InputError(path, where + ": runtime_s", "must be > 0");
  return r;
}

bool side_matches(const std::string& value, const std::string& pattern) {
  return pattern == "*" || pattern == value;
}

// The "pair" value of a record line without parsing it: a record's keys are sorted, and none of
// the objects before "pair" (knobs) has a key "pair", so the first one is the record's. "" when
// there is none.
std::string pair_of_line(const std::string& line) {
  static const std::string tag = "\"pair\":\"";
  const size_t at = line.find(tag);
  if (at == std::string::npos) return "";
  const size_t end = line.find('"', at + tag.size());
  return end == std::string::npos ? "" : line.substr(at + tag.size(), end - at - tag.size());
}

}  // namespace

RecordId record_id(const nlohmann::json& j, const std::string& path, int64_t line_no) {
  const std::string where = "line " + std::to_string(line_no);
  for (const char* key : {"key", "pair"}) {
    if (!j.contains(key)) throw InputError(path, where + ": " + key, "missing");
    if (!j[key].is_string()) throw InputError(path, where + ": " + key, "wrong type");
  }
  if (!j.contains("index")) throw InputError(path, where + ": index", "missing");
  if (!json_int_in(j["index"], 0, INT32_MAX)) throw InputError(path, where + ": index", "must be an integer from 0 to 2^31-1");
  RecordId id{j["key"].get<std::string>(), j["pair"].get<std::string>(), j["index"].get<int>()};
  const std::string expected = id.pair + "#" + std::to_string(id.index);
  if (id.key != expected) {
    throw InputError(path, where + ": key",
                     "'" + id.key + "' disagrees with the record's pair and index ('" + expected +
                         "'): the line was changed after it was written; delete it and `autoddl sync dataset` "
                         "makes the record again");
  }
  return id;
}

std::map<std::string, std::string> record_knobs(const nlohmann::json& j, const std::string& path,
                                                const std::string& where) {
  std::map<std::string, std::string> knobs;
  if (!j.contains("knobs")) return knobs;
  if (!j["knobs"].is_object()) throw InputError(path, where + ": knobs", "must be an object");
  for (const auto& [k, v] : j["knobs"].items()) {
    if (!v.is_string()) throw InputError(path, where + ": knobs." + k, "must be a string");
    knobs[k] = v.get<std::string>();
  }
  return knobs;
}

std::string records_path(const std::string& dir) {
  const std::string path = dir + "/records.jsonl";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw InputError(path, "", "cannot open (a directory written by `autoddl sync dataset`?)");
  }
  return path;
}

std::vector<LabeledRecord> read_records(const std::vector<std::string>& dirs, const std::string& pairs,
                                        const std::function<void(const std::string&)>& note) {
  std::vector<LabeledRecord> out;
  std::set<std::pair<std::string, int>> seen;
  for (const std::string& dir : dirs) {
    const std::string path = records_path(dir);
    int64_t lines = 0;
    const JsonlScan scan = read_jsonl_lines(path, [&](const std::string& line, int64_t line_no) {
      ++lines;
      if (!pairs.empty()) {
        const std::string pair = pair_of_line(line);
        if (!pair.empty() && !pair_matches(pair, pairs)) return;  // no "pair": parse_record names the error
      }
      LabeledRecord r = parse_record(line, path, line_no);
      if (seen.insert({r.pair, r.index}).second) out.push_back(std::move(r));
    });
    if (scan.torn_line > 0 && note) note(torn_line_note(path, scan.torn_line, "its record is not used"));
    if (lines == 0) throw InputError(path, "", "no records");
  }
  return out;
}

std::vector<RankSample> to_samples(const std::vector<LabeledRecord>& records) {
  std::map<std::string, int> ids;
  for (const LabeledRecord& r : records) ids[r.pair] = 0;
  int next = 0;
  for (auto& [pair, id] : ids) id = next++;
  std::vector<RankSample> out;
  out.reserve(records.size());
  for (const LabeledRecord& r : records) out.push_back({r.features, r.runtime_s, ids[r.pair]});
  return out;
}

void split_within_pairs(const std::vector<LabeledRecord>& records, double holdout, uint64_t seed,
                        std::vector<LabeledRecord>& train, std::vector<LabeledRecord>& test) {
  if (!(holdout >= 0 && holdout < 1)) throw InputError("--holdout", "", "must be in [0, 1)");
  std::map<std::string, std::vector<size_t>> by_pair;
  for (size_t i = 0; i < records.size(); ++i) by_pair[records[i].pair].push_back(i);
  std::vector<bool> held(records.size(), false);
  for (auto& [pair, members] : by_pair) {
    // sort by index first so the split does not depend on the order records were written in
    std::sort(members.begin(), members.end(),
              [&](size_t a, size_t b) { return records[a].index < records[b].index; });
    std::mt19937_64 rng(seed ^ stable_hash(pair));
    std::shuffle(members.begin(), members.end(), rng);
    size_t n = static_cast<size_t>(holdout * static_cast<double>(members.size()) + 0.5);
    if (holdout > 0 && members.size() >= 2) n = std::clamp<size_t>(n, 1, members.size() - 1);
    for (size_t k = 0; k < n; ++k) held[members[k]] = true;
  }
  train.clear();
  test.clear();
  for (size_t i = 0; i < records.size(); ++i) (held[i] ? test : train).push_back(records[i]);
}

std::unique_ptr<Ranker> make_ranker(const std::string& name, uint64_t seed, const std::string& flag) {
  if (name == "linear") return make_linear_ranker();
  if (name == "xgboost") {
#ifdef AUTODDL_SYNC_HAVE_XGBOOST
    XgbRankerOptions o;
    o.seed = seed;

    return make_xgb_ranker(o);
#else
    throw InputError(flag, "", "this autoddl was built without libxgboost (use linear)");
#endif
  }
  (void)seed;
  throw InputError(flag, "", "unknown ranker '" + name + "' (known: linear, xgboost)");
}

std::unique_ptr<Ranker> load_ranker(const std::string& path, std::string* kind) {
  std::string text = read_text_file(path);
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  const bool linear = !j.is_discarded() && j.is_object() && j.value("format", "") == "autoddl-sync-linear-ranker";
  std::unique_ptr<Ranker> r = make_ranker(linear ? "linear" : "xgboost", 0, path);
  r->load(path);
  if (kind) *kind = linear ? "linear" : "xgboost";
  return r;
}

PairMetrics pair_metrics(const std::vector<LabeledRecord>& records, const std::vector<double>& scores,
                         double min_gap) {
  PairMetrics m;
  m.min_gap = min_gap;
  std::vector<RankSample> samples = to_samples(records);
  m.all = rank_metrics(samples, scores);
  m.gap_all = rank_metrics(samples, scores, min_gap);
  std::map<std::string, std::pair<std::vector<RankSample>, std::vector<double>>> by_pair;
  for (size_t i = 0; i < records.size(); ++i) {
    by_pair[records[i].pair].first.push_back(samples[i]);
    by_pair[records[i].pair].second.push_back(scores[i]);
  }
  for (const auto& [pair, ss] : by_pair) {
    m.per_pair[pair] = rank_metrics(ss.first, ss.second);
    m.gap_per_pair[pair] = rank_metrics(ss.first, ss.second, min_gap);
  }
  return m;
}

PairMetrics evaluate_ranker(const Ranker& r, const std::vector<LabeledRecord>& records, double min_gap) {
  for (const LabeledRecord& rec : records) {
    if (rec.features.size() != feature_names().size())
      throw InputError("ranker", "features", "feature count differs from the model's");
  }
  return pair_metrics(records, r.score(to_samples(records)), min_gap);
}

bool pair_matches(const std::string& pair, const std::string& patterns) {
  const size_t at = pair.rfind('@');
  const std::string model = pair.substr(0, at), cluster = at == std::string::npos ? "" : pair.substr(at + 1);
  size_t start = 0;
  while (start <= patterns.size()) {
    size_t end = patterns.find(',', start);
    if (end == std::string::npos) end = patterns.size();
    std::string item = patterns.substr(start, end - start);
    const size_t pat_at = item.rfind('@');
    if (pat_at == std::string::npos) {
      if (side_matches(model, item)) return true;  // a bare model name: every cluster
    } else if (side_matches(model, item.substr(0, pat_at)) && side_matches(cluster, item.substr(pat_at + 1))) {
      return true;
    }
    start = end + 1;
  }
  return false;
}

}  // namespace autoddl::sync
