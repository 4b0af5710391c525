// Sweep results on disk. A sweep directory holds sweep.json (the config and every cell's key and
// inputs) and one or more JSONL files results*.jsonl: results.jsonl for an unsharded run,
// results.shard-I-of-N.jsonl per shard, so shards never share a file (Slurm tasks on a shared
// file system). One line per finished cell, appended with one write() on an O_APPEND descriptor
// and fsync'ed: a kill loses at most the cells in flight, and a torn last line (a kill inside
// write) is trimmed when the file is reopened and skipped by readers; any other unreadable line
// is an error (costmodel/jsonl.hpp holds these rules for every JSONL file).
#pragma once
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autoddl/costmodel/jsonl.hpp"
#include "autoddl/experiments/matrix.hpp"

namespace autoddl::experiments {

struct ResultRow {
  nlohmann::json row;  // key, inputs, status ("ok" | "failed"), results, error, wall_s, autoddl_version, ...
  std::string file;    // where it was read from
  int line = 0;
  const std::string& key() const { return row.at("key").get_ref<const std::string&>(); }
  bool ok() const {
    const auto s = row.find("status");
    return s != row.end() && *s == "ok";
  }
};

// Appends rows to one results file (see above). Opening trims a torn last line.
class ResultLog : public JsonlLog {
 public:
  using JsonlLog::JsonlLog;
  void append(const nlohmann::json& row);  // one line, one write(), fsync
};

// The results file name for a shard ("results.jsonl" when count == 1).
std::string results_file_name(int shard_index, int shard_count);

// Every row of every results*.jsonl in `dir` (files sorted by name, rows in file order). Torn
// last lines are skipped and counted in `torn` when given; any other line that is not a JSON
// object with a string "key" throws InputError(file, "line N", reason).
std::vector<ResultRow> read_result_rows(const std::string& dir, int* torn = nullptr);

// The row that stands for each key: the last ok row, or else the last failed row.
std::map<std::string, ResultRow> latest_rows(const std::vector<ResultRow>& rows);

// sweep.json: {"name", "config_file", "config", "cells": [{"key", "inputs"}]}.
void write_sweep_manifest(const std::string& dir, const SweepConfig& config, const std::vector<Cell>& cells);
// Reads DIR/sweep.json; throws InputError(DIR/sweep.json, field, reason) when absent or broken.
nlohmann::json read_sweep_manifest(const std::string& dir);

// "2026-11-24T06:40:00Z"
std::string utc_now_text();
// Project version and the commit it was configured at, for result rows.
const char* autoddl_version();

}  // namespace autoddl::experiments
