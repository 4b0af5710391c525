// AutoSync's knowledge-guided strategy space (AutoDist branch autosync-inference,
// strategy/auto/strategy_sampler.py; reference/autosync.md §3), as a seeded sampler:
// per variable, maybe partition it (by byte size: below partition_lb_bytes never, at or above
// partition_ub_bytes always, else with probability 1/2) along an axis drawn uniformly from its
// partitionable ones (those longer than 1; axis 0 only for a sparse or embedding variable,
// AutoSync's VarItem.partitionable_axes), shards uniform in [2, min(extent, max_shards)]; each
// whole variable or shard gets PS or all-reduce (sparse gradients always PS; PS synchronous,
// as AutoSync samples sync = true, staleness 0 only; local replication sampled only when a
// node has > 1 GPU;
// all-reduce compressor uniform over none/fp16, algorithm auto). Then the post-pass places PS
// shards with the load balancer and groups all-reduce shards with the merge scheme.
#pragma once
#include <cstdint>
#include <optional>
#include <random>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/sync/strategy.hpp"

namespace autoddl::sync {

// greedy: each PS shard (largest first) to the least-loaded node by bytes (ps_load_balancer.py
// "sorted_greedy"); christy: a node drawn with probability softmax(target − load) in units of
// the mean shard, targets equal per node ("christy", randomized).
enum class LoadBalancer : uint8_t { greedy, christy };
// ordered_balanced: keep graph order, close a group once it holds total/num_groups bytes;
// chunk: shard index // chunk; random: a uniform group per shard, every group non-empty.
enum class MergeScheme : uint8_t { ordered_balanced, chunk, random };

struct SamplerOptions {
  double partition_lb_bytes = 100e3;  // AutoSync data folders: "if-partition-lb-100000"
  double partition_ub_bytes = 1e12;
  int max_shards = 20;                // "max-par-20"; AutoStrategy num_partition_bounds [2, 40]
  int max_groups = 20;                // AutoStrategy num_group_bounds [-1, 20]
  // Either choice drawn per strategy when unset.
  std::optional<LoadBalancer> balancer;
  std::optional<MergeScheme> merge;
};

Strategy sample_strategy(const std::vector<Variable>& vars, const costmodel::ClusterSpec& c,
                         const SamplerOptions& options, std::mt19937_64& rng);

}  // namespace autoddl::sync
