// Attaching a calibration to a cluster spec (see calibration.hpp, attach_calibration): measured
// GPU figures replace the preset's, so the cost model and the simulator both use them without
// knowing where they came from; collectives are looked up per call (collective.cpp, mesh.cpp).
#include <algorithm>
#include <initializer_list>

#include "autoddl/costmodel/calibration.hpp"

namespace autoddl::costmodel {

namespace {

// The calibrated efficiency table for `op`, rescaled from the calibration's peak to the preset's.
bool apply_efficiency(const Calibration& cal, const GpuSpec& gpu, const char* op,
                      std::initializer_list<DType> dtypes, std::vector<EfficiencyPoint>& out) {
  for (DType t : dtypes) {
    const EfficiencyCalibration* e = cal.find_efficiency(op, t);
    if (e == nullptr || e->points.empty() || gpu.peak_flops(t) <= 0) continue;
    const double scale = e->peak_flops_per_s / gpu.peak_flops(t);
    out.clear();
    for (const EfficiencyPoint& p : e->points) {
      out.push_back({p.flops, std::clamp(p.efficiency * scale, 1e-6, 1.0)});
    }
    return true;
  }
  return false;
}

}  // namespace

void attach_calibration(ClusterSpec& c, const std::string& base_dir) {
  if (c.calibration_file.empty()) return;
  const std::string path = c.calibration_file.front() == '/' ? c.calibration_file
                                                             : base_dir + "/" + c.calibration_file;
  attach_calibration(c, std::make_shared<const Calibration>(load_calibration_file(path)), c.calibration_file);
}

void attach_calibration(ClusterSpec& c, std::shared_ptr<const Calibration> cal, const std::string& label) {
  c.calibration_file = label;
  const std::string src = "calibrated: " + label;
  if (cal->memory.hbm_bytes_per_s > 0) {
    c.gpu.hbm_bytes_per_s = cal->memory.hbm_bytes_per_s;
    c.gpu.hbm_efficiency = 1.0;  // a measured rate is already what kernels achieve
    c.sources["gpu.hbm_bytes_per_s"] = src;
    c.sources["gpu.hbm_efficiency"] = src;
  }
  if (cal->memory.launch_overhead_s > 0) {
    c.gpu.launch_overhead_s = cal->memory.launch_overhead_s;
    c.sources["gpu.launch_overhead_s"] = src;
  }
  // Each measured dtype sets its own table (GpuSpec): FP8 and FP32 theirs, the tensor-core
  // half-precision one the shared table; where no half-precision one was measured, the FP32 one
  // stands for it too, as the only measurement there is.
  auto apply = [&](const char* op, std::initializer_list<DType> dtypes, std::vector<EfficiencyPoint>& table,
                   const char* key) {
    if (!apply_efficiency(*cal, c.gpu, op, dtypes, table)) return false;
    c.sources[key] = src;
    return true;
  };
  const auto shared = {DType::bf16, DType::fp16, DType::fp32};
  apply("matmul", shared, c.gpu.matmul_efficiency, "gpu.matmul_efficiency");
  apply("conv", shared, c.gpu.conv_efficiency, "gpu.conv_efficiency");
  apply("matmul", {DType::fp8}, c.gpu.matmul_efficiency_fp8, "gpu.matmul_efficiency_fp8");
  const bool matmul_fp32 = apply("matmul", {DType::fp32}, c.gpu.matmul_efficiency_fp32, "gpu.matmul_efficiency_fp32");
  // FP32 convolutions measured only with TF32 allowed (conv_cudnn's default, left out by `fit`)
  // or not at all: cuDNN runs FP32 convolutions as implicit GEMMs on the same FMA units, so the
  // measured FP32 GEMM table is nearer than the tensor-core conv table it would otherwise get.
  if (!apply("conv", {DType::fp32}, c.gpu.conv_efficiency_fp32, "gpu.conv_efficiency_fp32") && matmul_fp32 &&
      c.gpu.conv_efficiency_fp32.empty()) {
    c.gpu.conv_efficiency_fp32 = c.gpu.matmul_efficiency_fp32;
    c.sources["gpu.conv_efficiency_fp32"] = src + " (its FP32 GEMM table: no FP32 convolution measured)";
  }
  c.calibration = std::move(cal);
}

}  // namespace autoddl::costmodel
