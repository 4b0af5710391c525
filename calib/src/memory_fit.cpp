// HBM bandwidth and launch overhead (see memory_fit.hpp).
#include "autoddl/calib/memory_fit.hpp"

#include <algorithm>

#include "autoddl/costmodel/error.hpp"

namespace autoddl::calib {

HbmFit fit_hbm(const std::vector<SizeTime>& copies) {
  AUTODDL_CHECK(copies.size() >= 2) << "fit_hbm needs at least two sizes";
  AlphaBeta ab = fit_alpha_beta(copies);
  HbmFit f;
  f.bytes_per_s = ab.beta_s_per_byte > 0 ? 1 / ab.beta_s_per_byte : 0;
  f.fixed_s = ab.alpha_s;
  f.quality = fit_quality(ab, copies);
  return f;
}

double launch_overhead_s(std::vector<double> launch_times_s) {
  AUTODDL_CHECK(!launch_times_s.empty()) << "launch_overhead_s needs samples";
  std::sort(launch_times_s.begin(), launch_times_s.end());
  size_t n = launch_times_s.size();
  return n % 2 ? launch_times_s[n / 2] : (launch_times_s[n / 2 - 1] + launch_times_s[n / 2]) / 2;
}

}  // namespace autoddl::calib
