// nccl_all_reduce: ncclAllReduce (sum). S = count·4 B, busbw factor 2(n−1)/n. Rank r sends
// r+1 everywhere, so every element must come back as n(n+1)/2. In place: send = recv.
#include "autoddl/costmodel/collective_factors.hpp"
#include "nccl_harness.hpp"

using namespace autoddl::calib::gpu;
namespace factors = autoddl::costmodel::collective_factors;  // busbw factors, as the cost model's

int main(int argc, char** argv) {
  CollectiveBench c{
      "all_reduce", "sum",
      factors::ar_factor,
      [](int) { return 1; },
      [](int) { return 1; },
      [](int r, int, int) { return float(r + 1); },
      [](int, int n, int) { return float(n * (n + 1) / 2); },
      [](int, int, size_t, size_t* send, size_t* recv) { *send = *recv = 0; return true; },
      [](const float* s, float* d, size_t count, int, int, ncclComm_t comm, cudaStream_t st) {
        return ncclAllReduce(s, d, count, ncclFloat, ncclSum, comm, st);
      }};
  return nccl_main(argc, argv, c);
}
