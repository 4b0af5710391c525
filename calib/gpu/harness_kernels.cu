// Device helpers of the harness: deterministic pseudo-random fill for fp32 / fp16 / bf16 / fp8
// (E4M3, the format Transformer Engine's forward GEMMs read).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "harness.hpp"

namespace autoddl::calib::gpu {

namespace {

__device__ __forceinline__ uint32_t mix(uint64_t x) {  // splitmix64, folded to 32 bits
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return static_cast<uint32_t>(x ^ (x >> 31));
}

template <class T>
__global__ void fill_kernel(T* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    float v = (mix(i ^ (uint64_t(seed) << 40)) >> 8) * (2.0f / 16777216.0f) - 1.0f;
    p[i] = static_cast<T>(v);
  }
}

template <class T>
void launch(void* p, size_t n, uint32_t seed, cudaStream_t s) {
  if (n == 0) return;
  unsigned blocks = static_cast<unsigned>(std::min<size_t>((n + 255) / 256, 65536));
  fill_kernel<T><<<blocks, 256, 0, s>>>(static_cast<T*>(p), n, seed);
  CALIB_CHECK(cudaGetLastError());
}

}  // namespace

void fill_random(void* p, size_t n, const std::string& dtype, uint32_t seed, cudaStream_t s) {
  if (dtype == "fp32") return launch<float>(p, n, seed, s);
  if (dtype == "fp16") return launch<__half>(p, n, seed, s);
  if (dtype == "bf16") return launch<__nv_bfloat16>(p, n, seed, s);
  if (dtype == "fp8" || dtype == "mxfp8") return launch<__nv_fp8_e4m3>(p, n, seed, s);
  // E2M1 pairs: any byte is two valid FP4 values (the format has no NaN or infinity); random E4M3
  // bytes serve.
  if (dtype == "nvfp4") return launch<__nv_fp8_e4m3>(p, (n + 1) / 2, seed, s);
  throw CalibError("fill_random", __FILE__, __LINE__, "unknown dtype " + dtype);
}

}  // namespace autoddl::calib::gpu
