// Per-variable features of a strategy for the recurrent ranker (issue 32 item 4; AutoSync's
// RankRNN, reference/autosync.md §4c): one row per variable in graph order, each the variable's
// size and sparsity and its shards' synchronizer choices pooled over the shards by their share of
// the variable's elements (AutoSync sums its per-partition features into variable slots the same
// way): architecture, PS server (one-hot over up to kSequenceServers nodes), local replication,
// compressor, all-reduce algorithm, and the fusion group's and PS server's load (what a shard
// shares its collective or NIC with). The LSTM (experiments/autosync_rankers.py, torch) walks
// these rows; the record's whole-strategy features (features.hpp) join its output, as AutoSync's
// best variant appended the predefined features.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/sync/strategy.hpp"
#include "autoddl/sync/variables.hpp"

namespace autoddl::sync {

inline constexpr int kSequenceServers = 16;  // AutoSync's MAX_NUM_WORKERS; later nodes share the last column

// Column names of one row, in order.
const std::vector<std::string>& variable_feature_names();

// vars.size() rows of variable_feature_names().size() values, row-major, rows in `vars` order
// (graph order, extract_variables). `s` must be valid for vars and c (validate_strategy).
std::vector<float> variable_sequence(const std::vector<Variable>& vars, const Strategy& s,
                                     const costmodel::ClusterSpec& c);

// `autoddl sync sequences`: for every record of DIR/records.jsonl of each dir (pairs: only those
// pair_matches accepts), its variable_sequence appended to PREFIX.f32 (little-endian float32,
// row-major) and one entry in PREFIX.json: format, column names, the whole-strategy feature
// names, and per record its key, pair, index, runtime_s, features and [row offset, rows].
// Models and clusters are built once per pair. Returns the record count. Throws InputError
// naming the file and line of a malformed record.
int64_t export_sequences(const std::vector<std::string>& dirs, const std::string& pairs, const std::string& prefix,
                         const std::function<void(const std::string&)>& note = {});

}  // namespace autoddl::sync
