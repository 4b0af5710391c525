// fp16 gradient compression (Compressor::fp16): AutoDist's HorovodCompressor, Horovod's
// hvd.Compression.fp16, PyTorch DDP's fp16_compress_hook. It halves the bytes an all-reduce of
// fp32 gradients carries, but it is not free and not exact:
// * Cost: a cast fp32 -> fp16 before the collective (reads 4, writes 2 bytes per element) and
//   fp16 -> fp32 after it (reads 2, writes 4): memory-bound kernels, priced as costmodel prices
//   them (kernel_time_s: bytes at hbm_bytes_per_s x hbm_efficiency, plus a launch each). One
//   cast kernel each way per fusion group, over the group's compressed bytes (the fused buffer
//   DDP's hook casts; Horovod casts each tensor before fusion, a few more launches).
// * Loss: gradients lose mantissa bits and may underflow, which can change convergence; a
//   strategy that compresses is marked lossy in reports and compared separately (issue 32).
// Both evaluators (analytical.cpp, sync_emit.cpp) use these functions, so they charge the same.
#pragma once
#include <vector>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/sync/strategy.hpp"

namespace autoddl::sync {

// Whether `s` changes the bytes of `v`'s all-reduce: fp16 on a dense fp32 variable (a 16-bit
// gradient has nothing to cast; sparse gradients go through an all-gather, uncompressed).
bool compresses(const Synchronizer& s, const Variable& v);

// Whether `s` compresses any of `vars` (so it is lossy); a compressor on a gradient it cannot
// change (16-bit, sparse, PS) does not count.
bool uses_compression(const Strategy& s, const std::vector<Variable>& vars);

// What `bytes` of `v`'s dense gradient put in an all-reduce group under `s`: the bytes on the
// wire (halved when compressed) and the fp32 bytes the casts touch (0 when not compressed).
struct DenseBytes {
  double wire = 0, cast_fp32 = 0;
};
DenseBytes dense_bytes(const Synchronizer& s, const Variable& v, double bytes);

// Seconds of the two casts around one all-reduce whose compressed members hold `fp32_bytes`
// of fp32 gradients (0 for none).
double fp16_cast_s(const costmodel::GpuSpec& gpu, double fp32_bytes);

}  // namespace autoddl::sync
