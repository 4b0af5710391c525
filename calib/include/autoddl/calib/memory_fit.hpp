// HBM bandwidth and per-kernel overhead from copy / elementwise kernels: T(bytes) = α + bytes/BW
// fitted like the collectives (weighted by 1/t), where bytes counts every byte read plus every
// byte written (STREAM convention: copy moves 2·N, triad 3·N).
#pragma once
#include <vector>

#include "autoddl/calib/alpha_beta_fit.hpp"

namespace autoddl::calib {

struct HbmFit {
  double bytes_per_s = 0;        // 1/β of the fit: sustained HBM bandwidth
  double fixed_s = 0;            // α of the fit: the kernel's fixed cost
  costmodel::FitQuality quality;
};

// Needs ≥ 2 distinct sizes; bytes are bytes moved (read + written).
HbmFit fit_hbm(const std::vector<SizeTime>& copies);

// The median of per-launch times of an empty kernel: the launch overhead.
double launch_overhead_s(std::vector<double> launch_times_s);

}  // namespace autoddl::calib
