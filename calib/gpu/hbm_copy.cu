// hbm_copy: HBM bandwidth over the size sweep, STREAM-style (McCalpin): cudaMemcpy device to
// device, and copy / scale / triad kernels; bytes count every byte read plus every byte written
// (copy and scale 2N, triad 3N). Plus "launch": an empty kernel back to back, the per-launch
// overhead. Feeds calibration memory.hbm_bytes_per_s and memory.launch_overhead_s.
#include "harness.hpp"

using namespace autoddl::calib::gpu;

namespace {

__global__ void copy_kernel(const float4* __restrict__ a, float4* __restrict__ b, size_t n4) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n4; i += size_t(gridDim.x) * blockDim.x) b[i] = a[i];
}

__global__ void scale_kernel(const float4* __restrict__ a, float4* __restrict__ b, float s, size_t n4) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n4; i += size_t(gridDim.x) * blockDim.x) {
    float4 v = a[i];
    b[i] = make_float4(s * v.x, s * v.y, s * v.z, s * v.w);
  }
}

__global__ void triad_kernel(float4* __restrict__ a, const float4* __restrict__ b, const float4* __restrict__ c,
                             float s, size_t n4) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n4; i += size_t(gridDim.x) * blockDim.x) {
    float4 x = b[i], y = c[i];
    a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
  }
}

__global__ void empty_kernel() {}

struct Kernel {
  const char* name;
  int buffers_moved;  // bytes moved = buffers_moved × N
};

}  // namespace

int main(int argc, char** argv) {
  BenchInfo info{"hbm_copy", "HBM bandwidth: memcpy D2D, copy, scale, triad (STREAM), and launch overhead"};
  return run_main(argc, argv, info, [](const Options& opt, Report& report) {
    int dev = 0, sms = 0;
    CALIB_CHECK(cudaSetDevice(dev));
    CALIB_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    cudaStream_t s;
    CALIB_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    // Buffers hold whole float4s: sizes are rounded up to 16 B.
    size_t max_bytes = (opt.max_bytes + 15) / 16 * 16;
    float4 *a, *b, *c;
    CALIB_CHECK(cudaMalloc(&a, max_bytes));
    CALIB_CHECK(cudaMalloc(&b, max_bytes));
    CALIB_CHECK(cudaMalloc(&c, max_bytes));
    fill_random(a, max_bytes / 4, "fp32", 1, s);
    fill_random(b, max_bytes / 4, "fp32", 2, s);
    fill_random(c, max_bytes / 4, "fp32", 3, s);

    const Kernel kernels[] = {{"memcpy", 2}, {"copy", 2}, {"scale", 2}, {"triad", 3}};
    for (const Kernel& k : kernels) {
      for (size_t size : opt.sizes()) {
        size_t bytes = (size + 15) / 16 * 16, n4 = bytes / 16;
        unsigned blocks = static_cast<unsigned>(std::min<size_t>((n4 + 255) / 256, size_t(sms) * 8));
        std::string name = k.name;
        auto op = [&] {
          if (name == "memcpy") {
            CALIB_CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s));
          } else if (name == "copy") {
            copy_kernel<<<blocks, 256, 0, s>>>(a, b, n4);
          } else if (name == "scale") {
            scale_kernel<<<blocks, 256, 0, s>>>(a, b, 1.0001f, n4);
          } else {
            triad_kernel<<<blocks, 256, 0, s>>>(a, b, c, 0.5f, n4);
          }
        };
        Timed t = time_op(opt, {dev}, {s}, op);
        CALIB_CHECK(cudaGetLastError());
        Row r;
        r.name = k.name;
        r.size_bytes = double(k.buffers_moved) * bytes;
        r.count = static_cast<int64_t>(bytes / 4);
        r.dtype = "fp32";
        r.time_us = t.time_us;
        r.kernel_us = t.kernel_us;
        // algbw from GPU time when traced: that is the bandwidth a kernel sees.
        double us = t.kernel_us > 0 ? t.kernel_us : t.time_us;
        r.algbw_GBps = r.size_bytes / 1e3 / us;
        r.shape = {{"buffer_bytes", double(bytes)}};
        report.add(r);
      }
    }

    Timed t = time_op(opt, {dev}, {s}, [&] { empty_kernel<<<1, 1, 0, s>>>(); });
    CALIB_CHECK(cudaGetLastError());
    Row r;
    r.name = "launch";
    r.dtype = "fp32";
    r.time_us = t.time_us;
    r.kernel_us = t.kernel_us;
    report.add(r);

    CALIB_CHECK(cudaFree(a));
    CALIB_CHECK(cudaFree(b));
    CALIB_CHECK(cudaFree(c));
    CALIB_CHECK(cudaStreamDestroy(s));
  });
}
