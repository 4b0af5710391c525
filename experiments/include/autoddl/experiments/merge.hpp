// Combining the result folders of a sweep's shards (`autoddl sweep merge`) and reporting what a
// folder holds (`autoddl sweep status`).
#pragma once
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace autoddl::experiments {

struct MergeSummary {
  int cells = 0, ok = 0, failed = 0;
  int dropped = 0;                    // rows of cells not in the sweep (an older config)
  std::vector<nlohmann::json> missing;  // manifest cells without a row: {"key", "inputs"}
  std::string results_file;
};

// Reads every folder's sweep.json (they must list the same cells) and rows; of a cell's rows of
// several model versions, this binary's stands; a cell with an ok row of one version in two
// places is a duplicate and throws InputError(<file>, "line N", reason), as does an
// `out_dir` that is one of the inputs or already holds results. Writes out_dir/sweep.json and
// out_dir/results.jsonl (one row per cell that has one, in the sweep's order).
MergeSummary merge_sweeps(const std::vector<std::string>& dirs, const std::string& out_dir);

struct SweepStatus {
  std::string name;
  int cells = 0, ok = 0, failed = 0, torn = 0;
  std::vector<std::pair<std::string, int>> files;  // results file, rows
  std::vector<nlohmann::json> failed_rows;        // the standing row of each failed cell
  std::vector<nlohmann::json> missing;            // {"key", "inputs"}
  int stale = 0;                                  // rows of cells not in sweep.json
  std::map<std::string, int> versions;            // model version of the standing rows -> cells
};

SweepStatus sweep_status(const std::string& dir);

}  // namespace autoddl::experiments
