// nccl_reduce_scatter: ncclReduceScatter (sum). count elements received per rank, S = count·4 B·n
// (the full send buffer), busbw factor (n−1)/n. Rank r sends (r+1)(j+1) in chunk j, so rank r
// must receive (r+1)·n(n+1)/2. In place: rank r's result is chunk r of its send buffer.
#include "autoddl/costmodel/collective_factors.hpp"
#include "nccl_harness.hpp"

using namespace autoddl::calib::gpu;
namespace factors = autoddl::costmodel::collective_factors;  // busbw factors, as the cost model's

int main(int argc, char** argv) {
  CollectiveBench c{
      "reduce_scatter", "sum",
      factors::ring_factor,
      [](int n) { return n; },
      [](int) { return 1; },
      [](int r, int, int j) { return float((r + 1) * (j + 1)); },
      [](int r, int n, int) { return float((r + 1) * (n * (n + 1) / 2)); },
      [](int r, int, size_t count, size_t* send, size_t* recv) {
        *send = 0;
        *recv = size_t(r) * count;
        return true;
      },
      [](const float* s, float* d, size_t count, int, int, ncclComm_t comm, cudaStream_t st) {
        return ncclReduceScatter(s, d, count, ncclFloat, ncclSum, comm, st);
      }};
  return nccl_main(argc, argv, c);
}
