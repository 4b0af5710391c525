// GEMM / conv efficiency tables: the fraction of peak FLOP/s a kernel reaches as a function of
// its FLOPs (Calculon's size-to-efficiency table; calibration.md §3.5), fitted to measured
// kernels. The table is exactly what the cost model evaluates: efficiency linear in log10(FLOPs)
// between points, clamped at the ends, and a kernel takes max(FLOPs/(peak·eff), bytes/HBM).
#pragma once
#include <optional>
#include <vector>

#include "autoddl/costmodel/cluster.hpp"

namespace autoddl::calib {

struct KernelSample {
  double flops = 0;   // 2·M·N·K for a GEMM
  double bytes = 0;   // bytes it must read and write at least once
  double time_s = 0;  // kernel time
};

struct EfficiencyFitOptions {
  double points_per_decade = 4;  // knots of the piecewise-linear table in log10(FLOPs)
  double smoothing = 1e-3;       // weight of the second-difference penalty between knots
  int holdout_every = 5;         // hold out every k-th shape (by FLOPs) for the MAPE; < 2: none
  // > 0: kernels at least 90% explained by bytes / hbm_bytes_per_s are memory-bound; they are
  // not used to fit efficiency, only to evaluate it.
  double hbm_bytes_per_s = 0;
};

struct EfficiencyFit {
  std::vector<costmodel::EfficiencyPoint> points;
  int shapes = 0;
  double train_mape = 0;               // mean |relative time error| on the fitted shapes
  std::optional<double> holdout_mape;  // ... on held-out shapes, fitted without them
};

// Kernel time the cost model predicts from an efficiency table.
double predicted_kernel_time_s(const std::vector<costmodel::EfficiencyPoint>& table,
                               double peak_flops_per_s, double hbm_bytes_per_s,
                               const KernelSample& k);

// Fits the table by linear least squares on hat functions in log10(FLOPs), relative error
// weighting. Efficiencies are clamped to [1e-4, 1]; the caller checks samples against the peak.
EfficiencyFit fit_efficiency(const std::vector<KernelSample>& samples, double peak_flops_per_s,
                             const EfficiencyFitOptions& opt);

}  // namespace autoddl::calib
