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
#include "autoddl/experiments/version.hpp"

namespace autoddl::experiments {

struct ResultRow {
  nlohmann::json row;  // key, inputs, status ("ok" | "failed"), results, error, wall_s, autoddl_version, model_version, ...
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

// The row that stands for each key: the last ok row, or else the last failed row. Given a model
// version, rows of that version stand over rows of any other (a cell recomputed after a model
// change is that change's result even where it failed and the old row was ok).
std::map<std::string, ResultRow> latest_rows(const std::vector<ResultRow>& rows, const std::string& model_version = "");

// The model version a row records ("" for rows written before rows carried it).
std::string row_model_version(const nlohmann::json& row);

// sweep.json: {"name", "config_file", "config", "cells": [{"key", "inputs"}]}.
void write_sweep_manifest(const std::string& dir, const SweepConfig& config, const std::vector<Cell>& cells);
// Reads DIR/sweep.json; throws InputError(DIR/sweep.json, field, reason) when absent or broken.
nlohmann::json read_sweep_manifest(const std::string& dir);

// "2026-11-24T06:40:00Z"
std::string utc_now_text();

}  // namespace autoddl::experiments
