// α-β (Hockney) fitting of measured collective times, T(S) = α + β·S, per collective and group.
// Least squares weighted by 1/t (relative error), as calibration.md §3.4 recommends, so the
// 8 B latency points count as much as the 8 GiB bandwidth points; optionally piecewise by size
// band (NCCL changes protocol and channel count with size), and validated on held-out sizes.
#pragma once
#include <optional>
#include <span>
#include <vector>

#include "autoddl/costmodel/calibration.hpp"

namespace autoddl::calib {

struct SizeTime {
  double bytes = 0;
  double time_s = 0;
};

struct AlphaBeta {
  double alpha_s = 0;
  double beta_s_per_byte = 0;
  double time_s(double bytes) const { return alpha_s + beta_s_per_byte * bytes; }
};

// Minimizes Σ((α + β·S_i − t_i)/t_i)² subject to α, β ≥ 0. Needs ≥ 1 point with t > 0; with one
// distinct size it returns α = the (weighted) mean time and β = 0.
AlphaBeta fit_alpha_beta(std::span<const SizeTime> points);

// R² (weighted by 1/t², like the fit) and the max and mean relative error of `ab` on `points`.
costmodel::FitQuality fit_quality(const AlphaBeta& ab, std::span<const SizeTime> points);

struct BandOptions {
  int max_bands = 3;          // 1 = one α-β line over all sizes
  double tolerance = 0.05;    // use more bands only while some point is off by more than this
  int min_points = 4;         // per band
  int holdout_every = 4;      // hold out every k-th size for validation; < 2 disables
};

struct GroupFit {
  std::vector<costmodel::AlphaBetaBand> bands;  // each with its FitQuality
  // Mean |relative error| on held-out sizes when the same procedure runs without them:
  // of the α-β bands, and of log-size interpolation of the remaining measured table.
  std::optional<double> holdout_rel_error;
  std::optional<double> holdout_interp_rel_error;
};

// Fits bands to the points of one (collective, group). Points need not be sorted; sizes must be
// distinct (merge repeats first). The band count is the smallest ≤ max_bands whose worst
// relative error is within tolerance (else max_bands); boundaries minimize the weighted error.
GroupFit fit_group(std::vector<SizeTime> points, const BandOptions& opt);

}  // namespace autoddl::calib
