// What one rank of a validation plan needs on its GPU (validate_runner checks it against the
// free memory before allocating, and skips the plan if it does not fit): the runner's buffers,
// sized to the largest step of each kind and shared by all steps, cuBLASLt's workspace, and
// the NCCL buffers that NCCL allocates only when a connection is first used (issue 16, defect 9):
// collectives' ring/tree buffers unless NCCL_RUNTIME_CONNECT=0 (which the runner sets when it
// is unset, so they exist, and count, before the check), and point-to-point buffers (send/recv,
// all-to-all), which are always set up on first use. The NCCL figures are estimates at NCCL's
// default NCCL_BUFFSIZE (4 MiB) and channel counts, stated once here.
#pragma once
#include <cstddef>
#include <string>

#include "autoddl/calib/validation_format.hpp"

namespace autoddl::calib {

inline constexpr size_t kRunnerWorkspaceBytes = size_t(32) << 20;  // cuBLASLt
inline constexpr size_t kRunnerHeadroomBytes = size_t(512) << 20;  // CUDA context, cuBLASLt, fragmentation
// Ring + tree buffers of one communicator, connected lazily: up to 32 channels, Simple + LL128
// + LL (about 9 MiB per connection at NCCL_BUFFSIZE 4 MiB), a send and a receive peer per
// channel and algorithm.
inline constexpr size_t kNcclLazyCollectiveBytesPerComm = size_t(512) << 20;
// Point-to-point buffers per peer a rank sends to or receives from (Simple, a few channels).
inline constexpr size_t kNcclP2pBytesPerPeer = size_t(32) << 20;

struct RankBuffers {
  size_t a = 0, b = 0, c = 0;  // GEMM operands
  size_t half = 0;             // each of a memory step's source and destination
  size_t send = 0, recv = 0;   // collectives and send/recv
  std::string gemm_dtype, mem_dtype, comm_dtype;  // the first step's of each kind ("" if none)
  int communicators = 0;       // groups the rank belongs to
  int p2p_peers = 0;           // distinct ranks it exchanges point-to-point with
  size_t runner_bytes() const;  // buffers (16-byte rounded) + workspace
  size_t nccl_lazy_bytes(bool collectives_connected_at_init) const;
};

RankBuffers rank_buffers(const ValidationPlan& plan, int rank);

// Bytes per element of a plan dtype (fp32/int32 4, int64 8, fp16/bf16 2).
size_t plan_dtype_bytes(const std::string& dtype);
// A runner buffer's allocation: rounded up to 16 bytes (the copy kernel's uint4), at least 16.
size_t runner_alloc_bytes(size_t n);

// "" if `need` fits into `free_bytes` with the headroom, else the skip reason.
std::string memory_shortfall(const RankBuffers& need, size_t free_bytes, bool collectives_connected_at_init,
                             int rank);

}  // namespace autoddl::calib
