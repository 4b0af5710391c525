// The cells of the AutoSync ranker tasks (docs/sweep-json.md), computed in the worker process with
// sync/'s training functions on the records of a dataset folder (autoddl sync dataset), not by an
// autoddl command: sync_rank trains a ranker on N trials of one (model, cluster) pair and scores
// the pair's held-out records; sync_transfer trains on one pair and tests on another, without and
// with a few target trials (sync/transfer.hpp).
#pragma once
#include <nlohmann/json.hpp>

namespace autoddl::experiments {

// The row's results of a sync_rank or sync_transfer cell: {"sync_rank": {...}} or
// {"sync_transfer": {...}}. Throws InputError when the dataset lacks the records the cell needs.
nlohmann::json run_sync_learning_cell(const nlohmann::json& inputs);

}  // namespace autoddl::experiments
