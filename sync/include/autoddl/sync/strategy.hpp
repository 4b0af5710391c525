// A synchronization strategy: for every trainable variable (and for every shard of a
// partitioned one) how its gradient is synchronized across the data-parallel replicas.
// The factor space of AutoDist's strategy.proto / synchronizers.proto (reference/autosync.md §1):
// architecture PS or all-reduce; partitioning along one axis into even or uneven shards;
// PS: the node whose CPU serves the shard, per-node local replication (a proxy copy of the
// shard on each worker node that the node's GPUs read), synchronous or not and a staleness
// bound; all-reduce: fusion group, compressor, algorithm.
// Serialized as JSON (strategy_json.hpp, docs/sync-strategy-json.md).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/sync/variables.hpp"

namespace autoddl::sync {

enum class Arch : uint8_t { ps, all_reduce };
// fp16: gradients cast to half for the transfer (AutoDist's HorovodCompressor).
enum class Compressor : uint8_t { none, fp16 };
// auto: the fastest of costmodel's all-reduce models (as NCCL's tuner picks).
enum class ArAlgorithm : uint8_t { automatic, ring, tree, hierarchical };

std::string_view arch_name(Arch a);               // "ps", "all_reduce"
std::string_view compressor_name(Compressor c);   // "none", "fp16"
std::string_view algorithm_name(ArAlgorithm a);   // "auto", "ring", "tree", "hierarchical"

struct Synchronizer {
  Arch arch = Arch::all_reduce;
  // PS
  int server = 0;                  // node index whose CPU holds the variable (shard)
  // AutoDist's ps_synchronizer.py always sums a node's GPU gradients on the node's CPU and
  // pushes that one sum; local_replication adds a proxy copy of the (dense) shard on each worker
  // node, pulled once per node and read by the node's GPUs (proxy_variable.py).
  bool local_replication = false;
  // sync = false: no barrier, each node's push is applied on arrival and its pull follows its
  // own push (AutoSync searches only synchronous PS). staleness > 0 (requires sync): AutoDist
  // applies each node's gradient on arrival and lets a worker run up to `staleness` steps ahead
  // of the slowest (token queues of that size); the evaluators price one step, which the bound
  // never stops, so they step as sync = false does. Neither models convergence per step.
  bool sync = true;
  int staleness = 0;
  // all-reduce
  int group = 0;                   // fusion group: its variables go in one collective
  Compressor compressor = Compressor::none;
  ArAlgorithm algorithm = ArAlgorithm::automatic;
  friend bool operator==(const Synchronizer&, const Synchronizer&) = default;
};

struct VarConfig {
  std::string var;
  int axis = 0;         // partition axis (meaningful when shards > 1)
  int shards = 1;       // 1 = not partitioned
  bool uneven = false;  // shard sizes differ by one row (TF's fixed_size_partitioner)
  // One synchronizer per shard (size == shards).
  std::vector<Synchronizer> parts;
  friend bool operator==(const VarConfig&, const VarConfig&) = default;
};

struct Strategy {
  std::string id;        // free text; builders use their name
  std::string builder;   // which builder made it ("" for hand-written or sampled)
  std::vector<VarConfig> vars;  // one per variable, in any order
  friend bool operator==(const Strategy&, const Strategy&) = default;
};

// Extent of shard `i` of `shards` along a dimension of `extent`: even shards are extent/shards;
// uneven ones give the first extent % shards shards one extra row (TF fixed_size_partitioner).
int64_t shard_extent(int64_t extent, int shards, int i);
// Fraction of the variable's elements in shard `i` of its config.
double shard_fraction(const Variable& v, const VarConfig& c, int i);

// Checks `s` against the model's variables and the cluster; throws
// InputError(source, "<field path>", reason) naming e.g. "vars[3].parts[1].server":
// an unknown or repeated variable, a variable without a config, an axis out of range, shards
// that do not divide the axis (unless uneven), more shards than rows, a parts list of the
// wrong length, a server on a node the cluster does not have, a negative group, a negative
// staleness, or a positive staleness with sync false (AutoDist's PS builders assert it).
void validate_strategy(const Strategy& s, const std::vector<Variable>& vars,
                       const costmodel::ClusterSpec& c, const std::string& source);

}  // namespace autoddl::sync
