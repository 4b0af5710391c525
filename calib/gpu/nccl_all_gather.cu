// nccl_all_gather: ncclAllGather. count elements per rank, S = count·4 B·n (the gathered
// buffer), busbw factor (n−1)/n. Rank r sends r+1; chunk j of every result must be j+1.
// In place: rank r's send region is chunk r of its receive buffer.
#include "autoddl/costmodel/collective_factors.hpp"
#include "nccl_harness.hpp"

using namespace autoddl::calib::gpu;
namespace factors = autoddl::costmodel::collective_factors;  // busbw factors, as the cost model's

int main(int argc, char** argv) {
  CollectiveBench c{
      "all_gather", "none",
      factors::ring_factor,
      [](int) { return 1; },
      [](int n) { return n; },
      [](int r, int, int) { return float(r + 1); },
      [](int, int, int j) { return float(j + 1); },
      [](int r, int, size_t count, size_t* send, size_t* recv) {
        *send = size_t(r) * count;
        *recv = 0;
        return true;
      },
      [](const float* s, float* d, size_t count, int, int, ncclComm_t comm, cudaStream_t st) {
        return ncclAllGather(s, d, count, ncclFloat, comm, st);
      }};
  return nccl_main(argc, argv, c);
}
