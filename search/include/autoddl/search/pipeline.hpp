// Pipeline stage partition (Alpa's inter-op pass, simplified to one mesh shape; DESIGN.md
// "Pipeline"): layers are runs of ops sharing an Op::block label, split into contiguous stages
// by dynamic programming that minimizes the slowest stage's time under each stage's memory
// (parameters + activations × its in-flight micro-batches under 1F1B), with per-op costs taken
// from a reference assignment of single-stage tables over the same SBP mesh. The last layer
// holds the final norm, LM head and loss, the first the embedding, so the DP sees that their
// stages are heavier and gives them fewer layers.
// Interleaved (v chunks per stage, chunk k on stage k % S): the layers are split into S·v
// contiguous chunks by the same DP, minimizing the slowest chunk, each chunk's memory under
// capacity / v (so every stage's v chunks fit together).
#pragma once
#include <vector>

#include "autoddl/search/cost_tables.hpp"

namespace autoddl::search {

// Per op its layer: ops before the first block join the first layer, ops after the last block
// the last one, ops between blocks the preceding one.
std::vector<int> layer_of_ops(const costmodel::Graph& g, int& layers);

// The reference tables' options for a staged configuration: every op in stage 0, 1F1B, sends
// not overlapped (per-layer costs for partition_stages).
TableOptions single_stage(TableOptions staged);

struct StagePlan {
  std::vector<int> op_stage;
  std::vector<int> op_chunk;  // per op its chunk (= op_stage when not interleaved)
  std::vector<double> stage_time_s, stage_memory_bytes;
  bool fits = true;  // every stage's estimate is under capacity
};

// `reference` holds every op in stage 0 of a mesh with `stages` pipeline stages. Throws
// InputError("--mesh", ...) when there are fewer layers than stages.
StagePlan partition_stages(const CostTables& reference, const std::vector<int>& choice, int stages,
                           int chunks_per_stage = 1);

}  // namespace autoddl::search
