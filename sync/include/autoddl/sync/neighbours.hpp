// A neighbour of a strategy, the exploit half of the low-shot search's candidates (lowshot.hpp):
// one move applied to each shard with probability q in {0.1, 0.5, 1}: set the all-reduce
// compressor (to none or fp16), flip PS <-> all-reduce (dense variables only; a new PS shard
// gets a uniform server, a new all-reduce shard an existing or new group), move a PS shard to a
// uniform server, or move an all-reduce shard to another group. Partitioning is kept.
// AutoSync's sampler draws every variable independently, so it cannot reach e.g. "every
// gradient in fp16" (probability 2^-n); a neighbour of a fast strategy can.
#pragma once
#include <random>
#include <vector>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/sync/strategy.hpp"

namespace autoddl::sync {

// Writes the neighbour to `out`; false when the move changed nothing or the result is not a
// valid strategy (validate_strategy), e.g. a group mixing algorithms.
bool neighbour_strategy(const Strategy& s, const std::vector<Variable>& vars, const costmodel::ClusterSpec& c,
                        std::mt19937_64& rng, Strategy& out);

}  // namespace autoddl::sync
