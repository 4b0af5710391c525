// `autoddl sweep run`: runs a shard of a sweep's cells in parallel worker processes and appends
// one result row per finished cell. Each cell is a forked worker that runs the autoddl binary
// itself (cost, search, simulate with --json) and hands back the JSON it wrote, so the sweep
// layer only orchestrates and never re-implements the model. Workers die with the sweep
// (PR_SET_PDEATHSIG), so a killed sweep leaves no stray processes and loses only cells in flight.
#pragma once
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autoddl/experiments/config.hpp"
#include "autoddl/experiments/matrix.hpp"

namespace autoddl::experiments {

struct RunOptions {
  std::string binary;   // the autoddl executable the workers run
  std::string out_dir;  // "" = the config's output
  int jobs = 1;
  int shard_index = 0, shard_count = 1;
  bool retry_failed = false;  // run cells again whose last row is a failure
  // Keep rows of another model version (version.hpp) instead of recomputing them; they are
  // listed in the output and in the run summary.
  bool reuse = false;
  FILE* progress = stderr;
  int tty = -1;  // -1: ask isatty(progress); 0/1 force plain lines / a redrawn bar
};

struct RunSummary {
  int cells = 0;      // in this shard
  int already = 0;    // done before this run (ok, or failed and not retried), reused rows included
  int ran = 0, ok = 0, failed = 0;
  double wall_s = 0;
  std::string results_file;
  // Rows of another model version ("" = a row from before rows recorded it), by that version:
  std::map<std::string, int> stale_rerun;                       // recomputed (no --reuse)
  std::map<std::string, std::vector<std::string>> reused;      // kept (--reuse): their keys
  int reused_count() const;
  std::string summary_file;  // run.json (run.shard-I-of-N.json): this summary, written at the end
};

// "run.json", or "run.shard-I-of-N.json" for a shard.
std::string run_summary_file_name(int shard_index, int shard_count);
// "0123456789ab: 12, (unrecorded): 2" for a version -> count map ("" shown as "(unrecorded)").
std::string version_counts_text(const std::map<std::string, int>& counts);

RunSummary run_sweep(const SweepConfig& config, const RunOptions& options);

// Runs one cell's steps in this process (the worker's body) and returns
// {"status": "ok"|"failed", "results": {step: JSON}, "error": text}.
nlohmann::json run_cell_steps(const Cell& cell, const std::string& binary, const std::string& work_dir);

}  // namespace autoddl::experiments
