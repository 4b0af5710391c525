// The (model, cluster, strategy, runtime) dataset (issue 15 item 8), built only with the
// simulator (AUTODDL_SYNC_HAVE_SIM): per (model, cluster) pair, record 0..8 are the builders
// and the rest strategies from AutoSync's sampler; each record holds the strategy, its features
// (features.hpp), the analytical iteration time and the mean of `runs` simulated "runs" (SimGrid,
// seeded jitter).
// A record depends only on (seed, pair, index), so the dataset is the same for any --jobs and a
// resumed run completes exactly the missing records. JSONL; schema in DIR/schema.json.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace autoddl::sync {

struct DatasetPair {
  std::string model;
  std::map<std::string, std::string> knobs;
  std::string cluster;
  std::string key() const;  // "vgg16@autosync-a", knobs in brackets when given
};

// 8 models (vgg16, resnet50, resnet101, densenet121, inception_v3, bert, bert large, ncf) on
// autosync-a, autosync-b and dgx-a100.
std::vector<DatasetPair> default_dataset_pairs();

// The most records per pair one run writes (`--per-pair`): the paper's 420 many times over;
// the todo list is built before the first record, so a larger count would only use memory.
inline constexpr int kMaxRecordsPerPair = 100000;

struct DatasetOptions {
  int per_pair = 420;  // 24 pairs x 420 = 10,080 records; 1..kMaxRecordsPerPair
  uint64_t seed = 1;
  int jobs = 1;
  // Simulated runs per record (run r with the record's seed + r, SimSyncOptions::runs); the
  // label runtime_s is their mean, which cuts the run-to-run jitter by sqrt(runs).
  int runs = 1;
  // Called with one line when the run repairs the file (a torn last line cut off).
  std::function<void(const std::string&)> note;
};

nlohmann::json dataset_schema();

// Writes DIR/records.jsonl (appending to what is there, skipping records already present) and
// DIR/schema.json. records.jsonl must be a regular file (a link to one is followed and appended
// to, never replaced). A torn last line from an interrupted run (costmodel/jsonl.hpp) is cut
// off, with a note; any other line that is not a record whose key is "<pair>#<index>" of its
// own pair and index, or a key seen twice, is an InputError naming the line (a resume that
// trusted the key alone would keep a wrong record and skip the right one). `progress` is called
// after each record with (done, total). Returns the number of records written now.
int64_t write_dataset(const std::string& dir, const std::vector<DatasetPair>& pairs,
                      const DatasetOptions& options,
                      const std::function<void(int64_t, int64_t)>& progress = {});

// Recomputes every record's "features" and "analytical_iteration_s" in DIR/records.jsonl from
// its strategy, model and cluster, leaving the labels (the simulated runs) as they are: a
// dataset written before the features changed becomes usable without re-simulating. Rewrites
// the file atomically (and DIR/schema.json; a records.jsonl that is a link keeps its link and
// the file it names is rewritten); returns the number of records. Needs no simulator. A torn
// last line is dropped, and `note` called with one line saying so.
// Throws InputError("<dir>/records.jsonl", "line N: <field>", reason) on a malformed record.
int64_t refeature_dataset(const std::string& dir, const std::function<void(const std::string&)>& note = {});

}  // namespace autoddl::sync
