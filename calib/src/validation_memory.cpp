// A validation plan rank's GPU memory (see validation_memory.hpp): the sizing validate_runner's
// RankRunner allocates by, plus NCCL's lazily allocated buffers, so the check it makes before
// allocating counts what NCCL will still take during the run.
#include "autoddl/calib/validation_memory.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

namespace autoddl::calib {

size_t plan_dtype_bytes(const std::string& dtype) {
  if (dtype == "fp32" || dtype == "int32") return 4;
  if (dtype == "int64") return 8;
  return 2;
}

size_t runner_alloc_bytes(size_t n) { return std::max<size_t>(16, (n + 15) / 16 * 16); }

size_t RankBuffers::runner_bytes() const {
  return runner_alloc_bytes(a) + runner_alloc_bytes(b) + runner_alloc_bytes(c) + 2 * runner_alloc_bytes(half) + runner_alloc_bytes(send) + runner_alloc_bytes(recv) +
         kRunnerWorkspaceBytes;
}

size_t RankBuffers::nccl_lazy_bytes(bool collectives_connected_at_init) const {
  const size_t collectives = collectives_connected_at_init ? 0 : kNcclLazyCollectiveBytesPerComm * communicators;
  return collectives + kNcclP2pBytesPerPeer * p2p_peers;
}

RankBuffers rank_buffers(const ValidationPlan& plan, int rank) {
  RankBuffers r;
  std::set<int> peers;
  for (const PlanGroup& g : plan.groups) {
    if (std::find(g.ranks.begin(), g.ranks.end(), rank) != g.ranks.end()) ++r.communicators;
  }
  for (const PlanStep& s : plan.ranks[rank].steps) {
    const size_t e = plan_dtype_bytes(s.dtype);
    const size_t bytes = static_cast<size_t>(s.bytes);
    switch (s.kind) {
      case StepKind::gemm:
        r.a = std::max<size_t>(r.a, e * s.batch * s.m * s.k);
        r.b = std::max<size_t>(r.b, e * s.batch * s.k * s.n);
        r.c = std::max<size_t>(r.c, e * s.batch * s.m * s.n);
        if (r.gemm_dtype.empty()) r.gemm_dtype = s.dtype;
        break;
      case StepKind::memory:
        r.half = std::max<size_t>(r.half, bytes / 2 / s.kernels);
        if (r.mem_dtype.empty()) r.mem_dtype = s.dtype;
        break;
      case StepKind::collective: {
        const std::vector<int>& members = plan.groups[s.group].ranks;
        const size_t p = members.size();
        const bool gathers = s.collective == "all_gather", scatters = s.collective == "reduce_scatter";
        r.send = std::max(r.send, gathers ? bytes / p : bytes);
        r.recv = std::max(r.recv, scatters ? bytes / p : bytes);
        if (s.collective == "all_to_all") {  // ncclSend/ncclRecv to every member
          for (int m : members) {
            if (m != rank) peers.insert(m);
          }
        }
        if (r.comm_dtype.empty()) r.comm_dtype = s.dtype;
        break;
      }
      case StepKind::send:
      case StepKind::recv:
        r.send = std::max(r.send, bytes);
        r.recv = std::max(r.recv, bytes);
        if (s.peer >= 0) peers.insert(s.peer);
        if (r.comm_dtype.empty()) r.comm_dtype = s.dtype;
        break;
    }
  }
  r.p2p_peers = static_cast<int>(peers.size());
  return r;
}

std::string memory_shortfall(const RankBuffers& need, size_t free_bytes, bool collectives_connected_at_init,
                             int rank) {
  const size_t runner = need.runner_bytes(), nccl = need.nccl_lazy_bytes(collectives_connected_at_init);
  if (runner + nccl + kRunnerHeadroomBytes <= free_bytes) return "";
  char buf[240];
  std::snprintf(buf, sizeof buf,
                "rank %d needs %.2f GB of buffers and about %.2f GB that NCCL allocates during the run on GPU %d, "
                "%.2f GB are free",
                rank, runner / 1e9, nccl / 1e9, rank, free_bytes / 1e9);
  return buf;
}

}  // namespace autoddl::calib
