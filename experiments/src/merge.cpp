// Merging shard folders into one and the status of a folder (see merge.hpp).
#include "autoddl/experiments/merge.hpp"

#include <filesystem>
#include <map>
#include <set>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/experiments/results.hpp"

namespace autoddl::experiments {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::set<std::string> cell_keys(const json& manifest) {
  std::set<std::string> keys;
  for (const json& c : manifest["cells"]) keys.insert(c["key"].get<std::string>());
  return keys;
}

bool same_path(const std::string& a, const std::string& b) {
  std::error_code ec;
  return fs::exists(a) && fs::exists(b) && fs::equivalent(a, b, ec);
}

}  // namespace

MergeSummary merge_sweeps(const std::vector<std::string>& dirs, const std::string& out_dir) {
  if (dirs.empty()) throw InputError("sweep merge", "", "needs at least one sweep folder");
  MergeSummary sum;
  const json manifest = read_sweep_manifest(dirs[0]);
  const std::set<std::string> keys = cell_keys(manifest);
  for (size_t i = 1; i < dirs.size(); ++i) {
    if (cell_keys(read_sweep_manifest(dirs[i])) != keys) {
      throw InputError(dirs[i] + "/sweep.json", "cells", "not the same sweep as " + dirs[0] + " (other cells)");
    }
  }
  for (const std::string& d : dirs) {
    if (same_path(d, out_dir)) throw InputError("--out", "", out_dir + " is one of the folders being merged");
  }
  if (fs::exists(out_dir) && !read_result_rows(out_dir).empty()) {
    throw InputError("--out", "", out_dir + " already holds results; merge into a new folder");
  }
  // The standing row per key, and a duplicate check: two ok rows of one cell and one model
  // version in two folders. Within a folder a cell may have rows of several model versions (a
  // rerun after a model change appends): this binary's version stands over the others.
  const std::string current = model_version();
  std::map<std::string, ResultRow> chosen;
  for (const std::string& d : dirs) {
    const std::vector<ResultRow> rows = read_result_rows(d);
    for (const ResultRow& r : rows) sum.dropped += keys.count(r.key()) ? 0 : 1;
    for (const auto& [key, r] : latest_rows(rows, current)) {
      if (!keys.count(key)) continue;
      auto it = chosen.find(r.key());
      const std::string v = row_model_version(r.row), standing = it == chosen.end() ? "" : row_model_version(it->second.row);
      if (it == chosen.end()) {
        chosen.emplace(r.key(), r);
      } else if (v != standing && (v == current || standing == current)) {
        if (v == current) it->second = r;  // this model version stands over another
      } else if (r.ok() && it->second.ok()) {
        throw InputError(r.file, "line " + std::to_string(r.line),
                         "cell " + r.key() + " is already done in " + it->second.file + " line " +
                             std::to_string(it->second.line) + " (duplicate rows; merge each shard once)");
      } else if (r.ok() || !it->second.ok()) {
        it->second = r;  // an ok row stands over a failure; a later failure over an earlier one
      }
    }
  }
  std::string text;
  for (const json& c : manifest["cells"]) {
    auto it = chosen.find(c["key"].get<std::string>());
    if (it == chosen.end()) {
      sum.missing.push_back(c);
      continue;
    }
    text += dump_json(it->second.row) + "\n";
    (it->second.ok() ? sum.ok : sum.failed) += 1;
  }
  sum.cells = static_cast<int>(keys.size());
  fs::create_directories(out_dir);
  write_json_atomic(out_dir + "/sweep.json", manifest, 1);
  sum.results_file = out_dir + "/results.jsonl";
  write_file_atomic(sum.results_file, text);
  return sum;
}

SweepStatus sweep_status(const std::string& dir) {
  SweepStatus st;
  const json manifest = read_sweep_manifest(dir);
  if (manifest.contains("name") && manifest["name"].is_string()) st.name = manifest["name"].get<std::string>();
  const std::set<std::string> keys = cell_keys(manifest);
  st.cells = static_cast<int>(keys.size());
  const std::vector<ResultRow> rows = read_result_rows(dir, &st.torn);
  std::map<std::string, int> per_file;
  for (const ResultRow& r : rows) per_file[fs::path(r.file).filename().string()] += 1;
  st.files.assign(per_file.begin(), per_file.end());
  const auto latest = latest_rows(rows, model_version());
  for (const auto& [k, r] : latest) {
    if (!keys.count(k)) {
      ++st.stale;
      continue;
    }
    st.versions[row_model_version(r.row)] += 1;
    if (r.ok()) ++st.ok;
    else st.failed_rows.push_back(r.row);
  }
  st.failed = static_cast<int>(st.failed_rows.size());
  for (const json& c : manifest["cells"]) {
    if (!latest.count(c["key"].get<std::string>())) st.missing.push_back(c);
  }
  return st;
}

}  // namespace autoddl::experiments
