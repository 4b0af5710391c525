// The hand-made strategies of AutoDist (autodist/strategy/*.py at master 9bf89c9), Horovod and
// PyTorch DDP, with each source's default parameters (reference/autosync.md §2 and §7).
#pragma once
#include <string_view>
#include <vector>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/sync/strategy.hpp"

namespace autoddl::sync {

// AutoDist AllReduce / PartitionedAR / Parallax: chunk_size=128 (all_reduce_strategy.py).
inline constexpr int kAutoDistChunkSize = 128;
// Horovod: HOROVOD_FUSION_THRESHOLD default 64 MiB (horovod/common/operations.cc, 64 * 1024 * 1024).
inline constexpr double kHorovodFusionBytes = 64.0 * 1024 * 1024;
// PyTorch DDP: bucket_cap_mb=25 (torch/nn/parallel/distributed.py, MiB) and
// dist._DEFAULT_FIRST_BUCKET_BYTES = 1 MiB ("Experiments showed 1MB is a reasonable value").
inline constexpr double kDdpBucketBytes = 25.0 * 1024 * 1024;
inline constexpr double kDdpFirstBucketBytes = 1024.0 * 1024;

struct BuilderInfo {
  std::string_view name;
  std::string_view help;
  Strategy (*build)(const std::vector<Variable>& vars, const costmodel::ClusterSpec& c);
};

const std::vector<BuilderInfo>& builders();
// Throws InputError("--builder", "", "unknown builder 'x' (known: ...)").
const BuilderInfo& find_builder(std::string_view name);

// Partition counts of AutoDist's partitioners for a leading dimension `dim0`:
// PartitionedPS's get_num_shards = the smallest divisor >= 2 (dim0 itself when prime);
// UnevenPartitionedPS = the smallest i >= 2 that does not divide dim0. 1 (no partition) when
// that count exceeds dim0 (dim0 < 2, or dim0 = 2 for the uneven rule).
int smallest_divisor_shards(int64_t dim0);
int smallest_non_divisor_shards(int64_t dim0);

}  // namespace autoddl::sync
