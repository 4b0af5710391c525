// The matrix of a sweep config expanded into cells. A cell's `inputs` are canonical JSON (sorted
// keys, knob values after placeholder substitution), and its key is a hash of them, so a key
// depends on what the cell computes and not on where it sits in the config: reordering lists
// keeps every key, and a rerun finds its done cells by key. Shards split the cells sorted by
// key round-robin, so `--shard I/N` is the same set on every machine.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autoddl/experiments/config.hpp"

namespace autoddl::experiments {

struct Cell {
  std::string key;        // 16 hex digits
  nlohmann::json inputs;  // canonical inputs (what the key hashes)
  std::string error;      // set when the cell cannot run as expanded (e.g. {gpus/8} at 4 GPUs)
};

// One autoddl invocation of a cell: argv after the binary, and the JSON file it writes.
struct Step {
  std::string name;  // "cost", "search" or "simulate": the key of its JSON in the row's results
  std::vector<std::string> args;
};

// The number of cells expand_cells makes at most (a repeated item counts every time), counted
// from the config's list sizes without expanding anything; saturates at INT64_MAX.
int64_t count_cells(const SweepConfig& config);

// A rough wall time of one cell, in seconds, for the estimate printed before a sweep starts:
// a search cell its time_limit_s (the bound its methods stop at) plus a simulation, a
// sync_search cell its trials at kSyncTrialS each, the rest nominal seconds (docs/sweep-json.md).
inline constexpr double kSyncTrialS = 0.2;
double estimated_cell_s(const nlohmann::json& inputs);

// Every cell of the config, in config order (models, clusters, sizes, tasks, items, evaluators,
// seeds, repetitions).
std::vector<Cell> expand_cells(const SweepConfig& config);

// 64-bit FNV-1a of the inputs' canonical dump, as 16 hex digits.
std::string cell_key(const nlohmann::json& inputs);

// One line for progress and status: "gpt layers=2 | piz-daint 4 GPUs | search cd-nbh | analytical".
std::string describe(const nlohmann::json& inputs);

// The dataset pair key of a cell's model, knobs and cluster ("bert[size=large]@autosync-a").
std::string dataset_pair_key(const nlohmann::json& inputs);

// The autoddl runs of a cell; JSON files and scheme files go under `work_dir`. None for
// sync_rank and sync_transfer, which the worker computes itself (sync_cells.hpp).
std::vector<Step> cell_steps(const nlohmann::json& inputs, const std::string& work_dir);

// "I/N" with 0 <= I < N; throws InputError("--shard", "", reason).
void parse_shard(const std::string& text, int& index, int& count);
// The cells of shard I of N: sorted by key, every N-th from the I-th; returned in config order.
std::vector<Cell> shard_cells(const std::vector<Cell>& cells, int index, int count);

}  // namespace autoddl::experiments
