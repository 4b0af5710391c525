// Per-variable sequences for the recurrent ranker (var_sequence.hpp).
#include "autoddl/sync/var_sequence.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/jsonl.hpp"
#include "autoddl/sync/features.hpp"
#include "autoddl/sync/strategy_json.hpp"
#include "autoddl/sync/training.hpp"
#include "autoddl/sync/workload.hpp"

namespace autoddl::sync {

namespace {

enum Col : int {
  kLogBytes, kBytesShare, kSparse, kLogShards, kUneven, kPs, kAllReduce, kLocalReplication, kFp16,
  kAlgoAuto, kAlgoRing, kAlgoTree, kAlgoHierarchical, kGroupBytesShare, kGroupMembersLog, kGroupPosition,
  kServerBytesShare, kReadyPosition, kServer0, kColumns = kServer0 + kSequenceServers
};

}  // namespace

const std::vector<std::string>& variable_feature_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n = {"log10_bytes", "bytes_share", "sparse", "log2_shards", "uneven", "ps", "all_reduce",
                                  "local_replication", "fp16", "algorithm_auto", "algorithm_ring", "algorithm_tree",
                                  "algorithm_hierarchical", "group_bytes_share", "log2_group_members",
                                  "group_position", "server_bytes_share", "ready_position"};
    for (int k = 0; k < kSequenceServers; ++k) n.push_back("server_" + std::to_string(k));
    return n;
  }();
  return names;
}

std::vector<float> variable_sequence(const std::vector<Variable>& vars, const Strategy& s,
                                     const costmodel::ClusterSpec& c) {
  (void)c;  // the cluster is in the whole-strategy features; servers are node indices
  std::map<std::string, const VarConfig*> config;
  for (const VarConfig& vc : s.vars) config[vc.var] = &vc;
  double total = 0;
  for (const Variable& v : vars) total += v.bytes;
  if (!(total > 0)) total = 1;
  // Loads shared between shards: bytes and members per all-reduce group, bytes per PS server.
  std::map<int, double> group_bytes, server_bytes;
  std::map<int, int> group_members;
  int max_group = 0;
  for (const Variable& v : vars) {
    const auto it = config.find(v.name);
    if (it == config.end()) throw InputError("strategy", v.name, "no config for this variable");
    const VarConfig& vc = *it->second;
    for (int i = 0; i < vc.shards; ++i) {
      const Synchronizer& p = vc.parts[static_cast<size_t>(i)];
      const double b = v.bytes * shard_fraction(v, vc, i);
      if (p.arch == Arch::ps) {
        server_bytes[p.server] += b;
      } else {
        group_bytes[p.group] += b;
        group_members[p.group] += 1;
        max_group = std::max(max_group, p.group);
      }
    }
  }
  std::vector<int> ready = backward_ready_order(vars);
  std::vector<double> ready_pos(vars.size(), 0);
  for (size_t k = 0; k < ready.size(); ++k)
    ready_pos[static_cast<size_t>(ready[k])] = static_cast<double>(k) / std::max<size_t>(1, ready.size() - 1);

  std::vector<float> out(vars.size() * kColumns, 0.0f);
  for (size_t r = 0; r < vars.size(); ++r) {
    const Variable& v = vars[r];
    const VarConfig& vc = *config.at(v.name);
    double row[kColumns] = {};
    row[kLogBytes] = std::log10(std::max(1.0, v.bytes));
    row[kBytesShare] = v.bytes / total;
    row[kSparse] = v.sparse ? 1 : 0;
    row[kLogShards] = std::log2(static_cast<double>(vc.shards));
    row[kUneven] = vc.uneven ? 1 : 0;
    row[kReadyPosition] = ready_pos[r];
    for (int i = 0; i < vc.shards; ++i) {
      const Synchronizer& p = vc.parts[static_cast<size_t>(i)];
      const double w = shard_fraction(v, vc, i);  // pooled by element share
      if (p.arch == Arch::ps) {
        row[kPs] += w;
        row[kLocalReplication] += p.local_replication ? w : 0;
        row[kServerBytesShare] += w * server_bytes[p.server] / total;
        row[kServer0 + std::min(p.server, kSequenceServers - 1)] += w;
      } else {
        row[kAllReduce] += w;
        row[kFp16] += p.compressor == Compressor::fp16 ? w : 0;
        row[kAlgoAuto + static_cast<int>(p.algorithm)] += w;
        row[kGroupBytesShare] += w * group_bytes[p.group] / total;
        row[kGroupMembersLog] += w * std::log2(static_cast<double>(group_members[p.group]));
        row[kGroupPosition] += w * (max_group > 0 ? static_cast<double>(p.group) / max_group : 0);
      }
    }
    for (int k = 0; k < kColumns; ++k) out[r * kColumns + static_cast<size_t>(k)] = static_cast<float>(row[k]);
  }
  return out;
}

namespace {

struct PairModel {
  costmodel::ClusterSpec cluster;
  std::vector<Variable> vars;
};

}  // namespace

int64_t export_sequences(const std::vector<std::string>& dirs, const std::string& pairs, const std::string& prefix,
                         const std::function<void(const std::string&)>& note) {
  static_assert(std::endian::native == std::endian::little, "the .f32 file is little-endian: the host's floats as they are");
  std::map<std::string, PairModel> models;  // by pair key
  std::string rows;                         // the float32 file's bytes
  nlohmann::json records = nlohmann::json::array();
  std::set<std::string> keys;
  int64_t offset = 0;
  for (const std::string& dir : dirs) {
    const std::string path = records_path(dir);
    const JsonlScan scan = read_jsonl_lines(path, [&](const std::string& line, int64_t line_no) {
      const std::string where = "line " + std::to_string(line_no);
      const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded() || !j.is_object()) throw InputError(path, where, "malformed JSON");
      const RecordId id = record_id(j, path, line_no);
      if (!pairs.empty() && !pair_matches(id.pair, pairs)) return;
      if (!keys.insert(id.key).second) return;  // the same record in two dirs: once, as read_records
      for (const char* key : {"model", "cluster"}) {
        if (!j.contains(key) || !j[key].is_string()) throw InputError(path, where + ": " + key, "missing or not a string");
      }
      for (const char* key : {"strategy"}) {
        if (!j.contains(key) || !j[key].is_object()) throw InputError(path, where + ": " + key, "missing or not an object");
      }
      if (!j.contains("runtime_s") || !j["runtime_s"].is_number())
        throw InputError(path, where + ": runtime_s", "missing or not a number");
      if (!j.contains("features") || !j["features"].is_array() || j["features"].size() != feature_names().size())
        throw InputError(path, where + ": features", "missing or not " + std::to_string(feature_names().size()) +
                                                        " numbers (`autoddl sync dataset --refeature` rewrites them)");
      auto it = models.find(id.pair);
      if (it == models.end()) {
        const std::map<std::string, std::string> knobs = record_knobs(j, path, where);
        costmodel::ClusterSpec c = costmodel::resolve_cluster(j["cluster"].get<std::string>());
        const std::string model = j["model"].get<std::string>();
        costmodel::Graph g = build_workload_model(model, knobs, c);
        PairModel m{std::move(c), extract_variables(g)};
        it = models.emplace(id.pair, std::move(m)).first;
      }
      const PairModel& m = it->second;
      const Strategy s = strategy_from_json(j["strategy"], path + ": " + where + ": strategy");
      validate_strategy(s, m.vars, m.cluster, path + ": " + where + ": strategy");
      const std::vector<float> seq = variable_sequence(m.vars, s, m.cluster);
      const size_t at = rows.size();
      rows.resize(at + seq.size() * sizeof(float));
      std::memcpy(rows.data() + at, seq.data(), seq.size() * sizeof(float));
      records.push_back({{"key", id.key}, {"pair", id.pair}, {"index", id.index}, {"runtime_s", j["runtime_s"]},
                         {"features", j["features"]}, {"rows", {offset, static_cast<int64_t>(m.vars.size())}}});
      offset += static_cast<int64_t>(m.vars.size());
    });
    if (scan.torn_line > 0 && note) note(torn_line_note(path, scan.torn_line, "left out"));
  }
  if (records.empty()) throw InputError("--pairs", "", "matches no record of --data");
  write_file_atomic(prefix + ".f32", rows);
  write_json_atomic(prefix + ".json", {{"format", "autoddl-sync-sequences"},
                                       {"version", 1},
                                       {"columns", variable_feature_names()},
                                       {"feature_names", feature_names()},
                                       {"rows_file", std::filesystem::path(prefix + ".f32").filename().string()},  // beside it
                                       {"records", records}});
  return static_cast<int64_t>(records.size());
}

}  // namespace autoddl::sync
