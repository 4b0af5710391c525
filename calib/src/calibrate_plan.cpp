// The calibration run plan (see calibrate_plan.hpp).
#include "autoddl/calib/calibrate_plan.hpp"

#include <algorithm>

namespace autoddl::calib {

const std::vector<BenchInfo>& calibration_benchmarks() {
  static const std::vector<BenchInfo> table = {
#include "calibration_benchmarks.inc"  // generated from calib/benchmarks.cmake
  };
  return table;
}

std::vector<int> nccl_group_sizes(int gpus) {
  if (gpus <= 1) return {1};
  std::vector<int> g;
  for (int p = 2; p < gpus; p *= 2) g.push_back(p);
  g.push_back(gpus);
  return g;
}

std::vector<PlannedRun> calibration_plan(int gpus, bool quick, const std::vector<std::string>& only) {
  std::vector<PlannedRun> plan;
  for (const BenchInfo& b : calibration_benchmarks()) {
    if (!only.empty() && std::find(only.begin(), only.end(), b.program) == only.end()) continue;
    const std::vector<int> sizes = b.nccl ? nccl_group_sizes(gpus) : std::vector<int>{0};
    for (int g : sizes) {
      PlannedRun r{b.program, {}, b.program, b.what};
      if (g > 0) {
        r.args = {"-g", std::to_string(g)};
        r.stem += "_g" + std::to_string(g);
      }
      if (quick) r.args.push_back("--quick");
      plan.push_back(std::move(r));
    }
  }
  return plan;
}

}  // namespace autoddl::calib
