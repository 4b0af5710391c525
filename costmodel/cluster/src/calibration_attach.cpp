// Attaching a calibration to a cluster spec (see calibration.hpp, attach_calibration): measured
// GPU figures replace the preset's, so the cost model and the simulator both use them without
// knowing where they came from; collectives are looked up per call (collective.cpp, mesh.cpp).
#include <algorithm>

#include "autoddl/costmodel/calibration.hpp"

namespace autoddl::costmodel {

namespace {

// The calibrated efficiency table for `op`, rescaled from the calibration's peak to the preset's.
bool apply_efficiency(const Calibration& cal, const GpuSpec& gpu, const char* op,
                      std::vector<EfficiencyPoint>& out) {
  for (DType t : {DType::bf16, DType::fp16, DType::fp32}) {
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
  auto cal = std::make_shared<Calibration>(load_calibration_file(path));
  const std::string src = "calibrated: " + c.calibration_file;
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
  if (apply_efficiency(*cal, c.gpu, "matmul", c.gpu.matmul_efficiency)) c.sources["gpu.matmul_efficiency"] = src;
  if (apply_efficiency(*cal, c.gpu, "conv", c.gpu.conv_efficiency)) c.sources["gpu.conv_efficiency"] = src;
  c.calibration = std::move(cal);
}

}  // namespace autoddl::costmodel
