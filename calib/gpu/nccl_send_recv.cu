// nccl_send_recv: every rank sends count elements to rank r+1 and receives from rank r−1 (a
// ring shift, as nccl-tests' sendrecv_perf), so every link carries one message at once.
// S = count·4 B, busbw factor 1. Rank r sends r+1 and must receive ((r−1) mod n)+1. With one
// GPU the rank sends to itself. No in-place form.
#include "autoddl/costmodel/collective_factors.hpp"
#include "nccl_harness.hpp"

using namespace autoddl::calib::gpu;
namespace factors = autoddl::costmodel::collective_factors;  // busbw factors, as the cost model's

int main(int argc, char** argv) {
  CollectiveBench c{
      "send_recv", "none",
      factors::one,
      [](int) { return 1; },
      [](int) { return 1; },
      [](int r, int, int) { return float(r + 1); },
      [](int r, int n, int) { return float((r - 1 + n) % n + 1); },
      [](int, int, size_t, size_t*, size_t*) { return false; },
      [](const float* s, float* d, size_t count, int r, int n, ncclComm_t comm, cudaStream_t st) {
        ncclResult_t res = ncclSend(s, count, ncclFloat, (r + 1) % n, comm, st);
        if (res != ncclSuccess) return res;
        return ncclRecv(d, count, ncclFloat, (r - 1 + n) % n, comm, st);
      }};
  return nccl_main(argc, argv, c);
}
