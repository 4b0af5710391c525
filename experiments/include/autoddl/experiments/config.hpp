// A sweep config (docs/sweep-json.md): a matrix of models (zoo names with knob lists, or graph
// files) x clusters (presets or files, with node or GPU counts) x tasks (search methods, or
// schemes) x evaluators x seeds x repetitions. load_sweep_config checks every field, builds
// every model once and resolves every cluster size, so a bad config fails before any cell runs
// with InputError(<file>, <field path>, <reason>).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace autoddl::experiments {

struct ModelEntry {
  std::string name;  // zoo name, or the graph file's path when `is_file`
  bool is_file = false;
  // knob -> values (text; may hold {gpus}-style placeholders), in the config's order
  std::vector<std::pair<std::string, std::vector<std::string>>> knobs;
};

// One cluster size: the node count given to --nodes. Fewer GPUs than one node holds run on one
// node of the cluster with only that many GPUs (`partial_node`: the cell writes a copy of the
// cluster with gpus_per_node lowered, so expert schemes such as megatron see exactly g GPUs).
struct ClusterSize {
  int nodes = 1;
  int gpus = 1;
  int gpus_per_node = 1;  // GPUs used per node
  bool partial_node = false;
};

struct ClusterEntry {
  std::string name;  // preset name, or a cluster file's path (ends in .json)
  std::vector<ClusterSize> sizes;
};

// sync_rank and sync_transfer train rankers on the records of a dataset folder (autoddl sync
// dataset) inside the worker process; they run no autoddl command.
enum class TaskKind { search, scheme, sync_search, sync_rank, sync_transfer };

struct TaskEntry {
  TaskKind kind = TaskKind::search;
  // --method values (search), --scheme values (scheme), rankers (sync_rank, sync_transfer); one ""
  // (sync_search), or its arms (above)
  std::vector<std::string> items;
  std::vector<std::string> evaluators;  // "analytical", "sim"
  std::string mesh;                // optional --mesh for every cell of the task
  double time_limit_s = 60;        // search only
  int restarts = 2;                // search only
  bool tie_layers = false;         // search only
  std::string fidelity = "flow";   // sim evaluator only
  int trials = 200;                // sync_search only: `autoddl sync search --trials`
  // sync_search with "arms" (the ablation, issue 32 item 4): items are "ranker:<name>", "random"
  // or "analytical" (`sync search --arm`), and each cell also runs with every value here
  // (false: `--sampler-only`). Both empty without "arms", so the cells of older configs keep
  // their keys.
  std::vector<bool> neighbours;
  std::string shadow_ranker;       // the random arm's ranker (scores its picks, picks nothing)
  std::string data;                // sync_rank, sync_transfer: the dataset folder
  std::vector<int> trial_counts;   // sync_rank: training trials per cell, one cell each
  double holdout = 0.2;            // sync_rank: fraction of each pair's records held out
  int finetune = 20;               // sync_transfer: target trials per test pair
  int train_trials = 0;            // sync_transfer: records of the pair trained on (0: all)
};

struct SweepConfig {
  std::string file;  // the config's path, as given
  std::string name, description;
  std::string output;  // default output directory ("" = results/<name>)
  std::vector<ModelEntry> models;
  std::vector<ClusterEntry> clusters;
  std::vector<TaskEntry> tasks;
  std::vector<uint64_t> seeds{1};  // search cells only (schemes have no randomness)
  int repetitions = 1;
  double cell_timeout_s = 3600;
  nlohmann::json raw;  // the file as read
};

// A config may expand to at most kMaxSweepCells cells (counted before anything is expanded or
// built: a million cells took 3.7 GB and 30 s before the first one ran); `sweep run
// --allow-large` lifts the limit to kMaxSweepCellsLarge.
inline constexpr int64_t kMaxSweepCells = 100000;
inline constexpr int64_t kMaxSweepCellsLarge = 10000000;

// Reads and checks the config; throws InputError(path, field path, reason).
SweepConfig load_sweep_config(const std::string& path, bool allow_large = false);
// Same from parsed JSON (`source` names it in errors).
SweepConfig sweep_config_from_json(const nlohmann::json& j, const std::string& source, bool allow_large = false);

// "{gpus}", "{nodes}", "{gpus_per_node}", optionally "*K" or "/K" (K a positive integer), e.g.
// "megatron:tp={gpus_per_node},pp=1,dp={nodes}" or "{gpus*8}". Returns false with `error`
// set when a placeholder is malformed or a division is not exact.
bool substitute_placeholders(const std::string& text, const ClusterSize& size, std::string& out,
                             std::string& error);

}  // namespace autoddl::experiments
