// Roofline kernel times (see compute.hpp).
#include "autoddl/costmodel/compute.hpp"

#include <algorithm>

namespace autoddl::costmodel {

double kernel_time_s(const GpuSpec& gpu, OpKind kind, DType dtype, double flops, double bytes,
                     int kernels) {
  if (flops <= 0 && bytes <= 0) return 0;  // a view, or a pass with nothing to compute: no kernel
  double eff = 1;
  if (kind == OpKind::matmul && !gpu.matmul_efficiency.empty()) {
    eff = interpolate_efficiency(gpu.matmul_efficiency, flops);
  } else if (kind == OpKind::conv2d && !gpu.conv_efficiency.empty()) {
    eff = interpolate_efficiency(gpu.conv_efficiency, flops);
  }
  double peak = gpu.peak_flops(dtype);
  double t_flops = peak > 0 ? flops / (peak * eff) : 0;
  double hbm = gpu.hbm_bytes_per_s * gpu.hbm_efficiency;
  double t_bytes = hbm > 0 ? bytes / hbm : 0;
  return std::max(t_flops, t_bytes) + kernels * gpu.launch_overhead_s;
}

double optimizer_bytes_per_param(DType dtype) { return dtype_bytes(dtype) == 2 ? 12.0 : 8.0; }

double optimizer_step_bytes(double local_params, DType dtype) {
  return local_params * (3.0 * dtype_bytes(dtype) + 2 * optimizer_bytes_per_param(dtype));
}

double optimizer_step_s(const GpuSpec& gpu, double local_params, DType dtype) {
  if (local_params <= 0) return 0;
  const double bytes = optimizer_step_bytes(local_params, dtype);
  double hbm = gpu.hbm_bytes_per_s * gpu.hbm_efficiency;
  return (hbm > 0 ? bytes / hbm : 0) + gpu.launch_overhead_s;
}

}  // namespace autoddl::costmodel
