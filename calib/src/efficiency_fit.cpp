// Efficiency tables by linear least squares on hat functions (see efficiency_fit.hpp). Knots sit
// every 1/points_per_decade decade across the measured FLOPs; a small second-difference penalty
// keeps knots with little data on the line through their neighbours.
#include "autoddl/calib/efficiency_fit.hpp"

#include <algorithm>
#include <cmath>

#include <Eigen/Dense>

#include "autoddl/costmodel/error.hpp"

namespace autoddl::calib {

namespace {

constexpr double kMinEfficiency = 1e-4;

double mape(const std::vector<costmodel::EfficiencyPoint>& table, double peak, double hbm,
            const std::vector<KernelSample>& samples) {
  if (samples.empty()) return 0;
  double s = 0;
  for (const KernelSample& k : samples) {
    s += std::abs(predicted_kernel_time_s(table, peak, hbm, k) - k.time_s) / k.time_s;
  }
  return s / samples.size();
}

std::vector<costmodel::EfficiencyPoint> fit_table(const std::vector<KernelSample>& samples,
                                                  double peak, const EfficiencyFitOptions& opt) {
  std::vector<const KernelSample*> used;
  for (const KernelSample& k : samples) {
    bool memory_bound = opt.hbm_bytes_per_s > 0 && k.bytes / opt.hbm_bytes_per_s >= 0.9 * k.time_s;
    if (!memory_bound) used.push_back(&k);
  }
  if (used.empty()) {  // all memory-bound: efficiency is unobservable, keep the compute roof
    return {{1, 1}};
  }
  double lo = 1e300, hi = 0;
  for (const KernelSample* k : used) {
    lo = std::min(lo, std::log10(k->flops));
    hi = std::max(hi, std::log10(k->flops));
  }
  double step = 1 / std::max(0.1, opt.points_per_decade);
  double first = std::floor(lo / step) * step;
  int knots = std::max(1, static_cast<int>(std::ceil((hi - first) / step - 1e-9)) + 1);
  if (knots == 1) {  // one FLOPs value: a single weighted mean efficiency
    double num = 0, den = 0;
    for (const KernelSample* k : used) {
      double e = k->flops / (k->time_s * peak);
      num += 1 / e;
      den += 1 / (e * e);
    }
    return {{std::pow(10.0, first), std::clamp(num / den, kMinEfficiency, 1.0)}};
  }

  int penalties = std::max(0, knots - 2);
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(used.size() + penalties, knots);
  Eigen::VectorXd rhs = Eigen::VectorXd::Zero(used.size() + penalties);
  for (size_t i = 0; i < used.size(); ++i) {
    double e = used[i]->flops / (used[i]->time_s * peak);
    double pos = (std::log10(used[i]->flops) - first) / step;
    int j = std::clamp(static_cast<int>(std::floor(pos)), 0, knots - 2);
    double t = pos - j;
    a(i, j) = (1 - t) / e;  // relative residual: (Σ w_j φ_j − e) / e
    a(i, j + 1) = t / e;
    rhs(i) = 1;
  }
  double lambda = std::sqrt(opt.smoothing);
  for (int j = 0; j < penalties; ++j) {
    size_t r = used.size() + j;
    a(r, j) = lambda;
    a(r, j + 1) = -2 * lambda;
    a(r, j + 2) = lambda;
  }
  Eigen::VectorXd w = a.colPivHouseholderQr().solve(rhs);
  std::vector<costmodel::EfficiencyPoint> table;
  for (int j = 0; j < knots; ++j) {
    table.push_back({std::pow(10.0, first + j * step), std::clamp(w(j), kMinEfficiency, 1.0)});
  }
  return table;
}

}  // namespace

double predicted_kernel_time_s(const std::vector<costmodel::EfficiencyPoint>& table,
                               double peak_flops_per_s, double hbm_bytes_per_s,
                               const KernelSample& k) {
  double eff = costmodel::interpolate_efficiency(table, k.flops);
  double t = k.flops / (peak_flops_per_s * eff);
  if (hbm_bytes_per_s > 0) t = std::max(t, k.bytes / hbm_bytes_per_s);
  return t;
}

EfficiencyFit fit_efficiency(const std::vector<KernelSample>& samples_in, double peak_flops_per_s,
                             const EfficiencyFitOptions& opt) {
  AUTODDL_CHECK(!samples_in.empty()) << "fit_efficiency needs samples";
  AUTODDL_CHECK(peak_flops_per_s > 0) << "peak must be positive";
  std::vector<KernelSample> samples = samples_in;
  for (const KernelSample& k : samples) {
    AUTODDL_CHECK(k.flops > 0 && k.time_s > 0) << "flops and time must be positive";
  }
  std::sort(samples.begin(), samples.end(),
            [](const KernelSample& a, const KernelSample& b) { return a.flops < b.flops; });

  EfficiencyFit fit;
  fit.shapes = static_cast<int>(samples.size());
  fit.points = fit_table(samples, peak_flops_per_s, opt);
  fit.train_mape = mape(fit.points, peak_flops_per_s, opt.hbm_bytes_per_s, samples);

  int k = opt.holdout_every;
  if (k >= 2) {
    std::vector<KernelSample> train, held;
    for (size_t i = 0; i < samples.size(); ++i) {
      (i % k == static_cast<size_t>(k - 1) ? held : train).push_back(samples[i]);
    }
    if (!held.empty() && !train.empty()) {
      auto table = fit_table(train, peak_flops_per_s, opt);
      fit.holdout_mape = mape(table, peak_flops_per_s, opt.hbm_bytes_per_s, held);
    }
  }
  return fit;
}

}  // namespace autoddl::calib
