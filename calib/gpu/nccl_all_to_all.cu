// nccl_all_to_all: pairwise exchange as nccl-tests' alltoall_perf does it, one ncclSend and one
// ncclRecv per peer in a group (works with every NCCL since 2.7). count elements per peer,
// S = count·4 B·n (the whole per-rank buffer), busbw factor (n−1)/n. Chunk j of rank r holds
// r·n+j+1, so rank r must receive j·n+r+1 from rank j. No in-place form.
#include "autoddl/costmodel/collective_factors.hpp"
#include "nccl_harness.hpp"

using namespace autoddl::calib::gpu;
namespace factors = autoddl::costmodel::collective_factors;  // busbw factors, as the cost model's

int main(int argc, char** argv) {
  CollectiveBench c{
      "all_to_all", "none",
      factors::ring_factor,
      [](int n) { return n; },
      [](int n) { return n; },
      [](int r, int n, int j) { return float(r * n + j + 1); },
      [](int r, int n, int j) { return float(j * n + r + 1); },
      [](int, int, size_t, size_t*, size_t*) { return false; },
      [](const float* s, float* d, size_t count, int, int n, ncclComm_t comm, cudaStream_t st) {
        for (int peer = 0; peer < n; ++peer) {
          ncclResult_t res = ncclSend(s + size_t(peer) * count, count, ncclFloat, peer, comm, st);
          if (res != ncclSuccess) return res;
          res = ncclRecv(d + size_t(peer) * count, count, ncclFloat, peer, comm, st);
          if (res != ncclSuccess) return res;
        }
        return ncclSuccess;
      }};
  return nccl_main(argc, argv, c);
}
