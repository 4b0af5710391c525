// The dataset writer (dataset.hpp). Pair keys and the default pairs need no simulator (sweep
// cells name pairs by them); the records do.
#include "autoddl/sync/dataset.hpp"

#include "autoddl/sync/features.hpp"

namespace autoddl::sync {

std::string DatasetPair::key() const {
  std::string k = model;
  if (!knobs.empty()) {
    k += "[";
    bool first = true;
    for (const auto& [name, value] : knobs) {
      k += (first ? "" : ",") + name + "=" + value;
      first = false;
    }
    k += "]";
  }
  return k + "@" + cluster;
}

std::vector<DatasetPair> default_dataset_pairs() {
  std::vector<DatasetPair> out;
  const std::vector<std::pair<std::string, std::map<std::string, std::string>>> models = {
      {"vgg16", {}},        {"resnet50", {}}, {"resnet101", {}}, {"densenet121", {}},
      {"inception_v3", {}}, {"bert", {}},     {"bert", {{"size", "large"}}}, {"ncf", {}}};
  for (const char* cluster : {"autosync-a", "autosync-b", "dgx-a100"}) {
    for (const auto& [model, knobs] : models) out.push_back({model, knobs, cluster});
  }
  return out;
}

nlohmann::json dataset_schema() {
  return {{"format", "autoddl-sync-dataset"},
          {"version", 1},
          {"record", {{"key", "\"<pair key>#<index>\", unique; the resume key"},
                      {"pair", "model[knobs]@cluster"},
                      {"model", "zoo model"},
                      {"knobs", "the zoo knobs the model was built with: the pair's, and AutoSync's per-replica batch x GPUs unless the pair sets batch (object)"},
                      {"cluster", "cluster preset"},
                      {"index", "0..8: the builders in `autoddl sync build` order; later: sampled"},
                      {"builder", "builder name, or \"sampled\""},
                      {"seed", "the simulator's jitter seed of this record"},
                      {"strategy", "strategy JSON (docs/sync-strategy-json.md)"},
                      {"features", "numbers, named by feature_names"},
                      {"analytical_iteration_s", "analytical evaluator"},
                      {"runtime_s", "the label: the mean of runtimes_s"},
                      {"runtimes_s", "simulated iterations (SimGrid with jitter, flow fidelity), run r with seed + r"},
                      {"sim_wall_s", "wall-clock seconds the simulation took"}}},
          {"feature_names", feature_names()}};
}

}  // namespace autoddl::sync

#ifdef AUTODDL_SYNC_HAVE_SIM

#include <filesystem>
#include <map>
#include <random>
#include <set>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/jsonl.hpp"
#include "autoddl/costmodel/zoo.hpp"
#include "autoddl/sim/child_pool.hpp"
#include "autoddl/sync/analytical.hpp"
#include "autoddl/sync/builders.hpp"
#include "autoddl/sync/features.hpp"
#include "autoddl/sync/sampler.hpp"
#include "autoddl/sync/simulated.hpp"
#include "autoddl/sync/strategy_json.hpp"
#include "autoddl/sync/stable_hash.hpp"
#include "autoddl/sync/training.hpp"
#include "autoddl/sync/workload.hpp"

namespace autoddl::sync {

namespace fs = std::filesystem;

namespace {

struct PairData {
  std::map<std::string, std::string> knobs;  // the pair's knobs with AutoSync's workload (workload.hpp)
  costmodel::Graph graph;
  costmodel::ClusterSpec cluster;
  std::vector<Variable> vars;
};

nlohmann::json make_record(const DatasetPair& pair, const PairData& d, int index, uint64_t seed, int runs) {
  // One generator per record, from (seed, pair, index): order- and job-independent.
  std::seed_seq seq{seed, stable_hash(pair.key()),
                    static_cast<uint64_t>(index)};
  std::mt19937_64 rng(seq);
  Strategy s;
  const auto& table = builders();
  if (index < static_cast<int>(table.size())) {
    s = table[static_cast<size_t>(index)].build(d.vars, d.cluster);
  } else {
    s = sample_strategy(d.vars, d.cluster, {}, rng);
    s.id = "sampled-" + std::to_string(index);
  }
  Evaluation e = evaluate_analytical(d.graph, d.vars, s, d.cluster);
  SimSyncOptions so;
  so.seed = rng();
  so.runs = runs;
  SimSyncResult r = simulate_strategy(d.graph, d.vars, s, d.cluster, so);
  return {{"key", pair.key() + "#" + std::to_string(index)},
          {"pair", pair.key()},
          {"model", pair.model},
          {"knobs", d.knobs},
          {"cluster", pair.cluster},
          {"index", index},
          {"builder", s.builder.empty() ? "sampled" : s.builder},
          {"seed", so.seed},
          {"strategy", strategy_to_json(s)},
          {"features", strategy_features(d.vars, s, e, d.cluster)},
          {"analytical_iteration_s", e.iteration_s},
          {"runtime_s", r.iteration_s},
          {"runtimes_s", r.runs_s},
          {"sim_wall_s", r.wall_s}};
}

// Keys of the records already in `path` (a JsonlLog has cut a torn last line off), each checked
// against its pair and index; a line that is no record, or a key seen twice, is refused.
std::set<std::string> existing_keys(const std::string& path) {
  std::map<std::string, int64_t> line_of;
  read_jsonl_lines(path, [&](const std::string& line, int64_t line_no) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      throw InputError(path, "line " + std::to_string(line_no),
                       "malformed JSON; a kill tears only the last line, so this one was changed otherwise: "
                       "delete it and `autoddl sync dataset` makes its record again");
    }
    const RecordId id = record_id(j, path, line_no);
    const auto [at, added] = line_of.emplace(id.key, line_no);
    if (!added) {
      throw InputError(path, "line " + std::to_string(line_no) + ": key",
                       "'" + id.key + "' is also at line " + std::to_string(at->second) + " (delete one of them)");
    }
  });
  std::set<std::string> keys;
  for (const auto& [key, line] : line_of) keys.insert(key);
  return keys;
}

}  // namespace

int64_t write_dataset(const std::string& dir, const std::vector<DatasetPair>& pairs,
                      const DatasetOptions& o, const std::function<void(int64_t, int64_t)>& progress) {
  if (o.per_pair < 1 || o.per_pair > kMaxRecordsPerPair) {
    throw InputError("--per-pair", "", "must be an integer from 1 to " + std::to_string(kMaxRecordsPerPair));
  }
  if (o.jobs < 1) throw InputError("--jobs", "", "must be >= 1");
  if (o.runs < 1 || o.runs > 100) throw InputError("--runs", "", "must be from 1 to 100");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError(dir, "", "cannot create the directory: " + ec.message());
  const std::string path = dir + "/records.jsonl";
  JsonlLog out(path);  // only a regular file; a torn last line cut off
  if (out.torn_line() > 0 && o.note) o.note(torn_line_note(path, out.torn_line(), "its record is made again"));
  const std::set<std::string> done = existing_keys(path);
  write_json_atomic(dir + "/schema.json", dataset_schema());

  std::vector<PairData> data;
  for (const DatasetPair& p : pairs) {
    costmodel::ClusterSpec c = costmodel::resolve_cluster(p.cluster);
    std::map<std::string, std::string> knobs = sync_workload(p.model, p.knobs, c).knobs;
    costmodel::Graph g = costmodel::build_zoo_model(p.model, knobs);
    PairData d{std::move(knobs), std::move(g), std::move(c), {}};
    d.vars = extract_variables(d.graph);
    data.push_back(std::move(d));
  }
  std::vector<std::pair<int, int>> todo;  // (pair, index)
  for (size_t p = 0; p < pairs.size(); ++p) {
    for (int i = 0; i < o.per_pair; ++i) {
      if (!done.count(pairs[p].key() + "#" + std::to_string(i))) todo.emplace_back(static_cast<int>(p), i);
    }
  }
  const int64_t total = static_cast<int64_t>(pairs.size()) * o.per_pair;
  int64_t written = 0;
  // Records are simulated in child processes (child_pool.hpp says why not threads) and
  // written here, in completion order, each complete on disk before it counts (resume).
  sim::for_each_in_children(
      todo.size(), o.jobs,
      [&](size_t t) {
        auto [p, i] = todo[t];
        return dump_json(make_record(pairs[static_cast<size_t>(p)], data[static_cast<size_t>(p)], i, o.seed, o.runs));
      },
      [&](size_t, std::string&& line) {
        out.append_line(line);
        ++written;
        if (progress) progress(static_cast<int64_t>(done.size()) + written, total);
      });
  return written;
}

}  // namespace autoddl::sync
#endif
