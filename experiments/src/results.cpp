// Reading and appending sweep result rows (see results.hpp for the on-disk contract).
#include "autoddl/experiments/results.hpp"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"

namespace autoddl::experiments {

namespace fs = std::filesystem;
using nlohmann::json;

void ResultLog::append(const json& row) {
  append_line(dump_json(row));  // dump() escapes newlines: one row, one line
}

std::string results_file_name(int shard_index, int shard_count) {
  if (shard_count <= 1) return "results.jsonl";
  return "results.shard-" + std::to_string(shard_index) + "-of-" + std::to_string(shard_count) + ".jsonl";
}

std::vector<ResultRow> read_result_rows(const std::string& dir, int* torn) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    // Not only regular files: a results file that is a link to /dev/zero is refused by the
    // reader, not skipped in silence.
    if (!e.is_directory() && name.rfind("results", 0) == 0 && name.size() > 6 &&
        name.substr(name.size() - 6) == ".jsonl") {
      files.push_back(e.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<ResultRow> rows;
  int torn_lines = 0;
  for (const std::string& f : files) {
    const JsonlScan scan = read_jsonl_lines(f, [&](const std::string& line, int64_t line_no) {
      json j = json::parse(line, nullptr, false);
      if (j.is_discarded() || !j.is_object() || !j.contains("key") || !j["key"].is_string()) {
        throw InputError(f, "line " + std::to_string(line_no),
                         "not a result row (a JSON object with a string \"key\"); a kill tears only the last "
                         "line, so this one was changed otherwise: delete it and its cell runs again");
      }
      rows.push_back({std::move(j), f, static_cast<int>(line_no)});
    });
    torn_lines += scan.torn_line > 0 ? 1 : 0;
  }
  if (torn) *torn = torn_lines;
  return rows;
}

std::string row_model_version(const json& row) {
  const auto v = row.find("model_version");
  return v != row.end() && v->is_string() ? v->get<std::string>() : "";
}

std::map<std::string, ResultRow> latest_rows(const std::vector<ResultRow>& rows, const std::string& model_version) {
  std::map<std::string, ResultRow> out;
  for (const ResultRow& r : rows) {
    auto it = out.find(r.key());
    if (it == out.end()) {
      out.emplace(r.key(), r);
      continue;
    }
    if (!model_version.empty()) {
      const bool mine = row_model_version(r.row) == model_version;
      const bool standing_mine = row_model_version(it->second.row) == model_version;
      if (mine != standing_mine) {
        if (mine) it->second = r;
        continue;
      }
    }
    if (r.ok() || !it->second.ok()) it->second = r;
  }
  return out;
}

void write_sweep_manifest(const std::string& dir, const SweepConfig& config, const std::vector<Cell>& cells) {
  json j = {{"name", config.name}, {"config_file", config.file}, {"config", config.raw}};
  j["cells"] = json::array();
  for (const Cell& c : cells) j["cells"].push_back({{"key", c.key}, {"inputs", c.inputs}});
  const std::string path = dir + "/sweep.json";
  // Shards of one sweep write the same text; skip the write when it is already there.
  std::ifstream in(path);
  if (in) {
    json old = json::parse(in, nullptr, false);
    if (!old.is_discarded() && old == j) return;
  }
  write_json_atomic(path, j, 1);
}

json read_sweep_manifest(const std::string& dir) {
  const std::string path = dir + "/sweep.json";
  if (!fs::is_regular_file(path)) throw InputError(path, "", "not a sweep directory (no sweep.json)");
  json j = read_json_file(path);
  if (!j.is_object() || !j.contains("cells") || !j["cells"].is_array()) throw InputError(path, "cells", "missing");
  for (size_t i = 0; i < j["cells"].size(); ++i) {
    const json& c = j["cells"][i];
    if (!c.is_object() || !c.contains("key") || !c["key"].is_string() || !c.contains("inputs")) {
      throw InputError(path, "cells[" + std::to_string(i) + "]", "needs key and inputs");
    }
  }
  return j;
}

std::string utc_now_text() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace autoddl::experiments
