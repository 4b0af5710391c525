// GEMM efficiency tables fitted to synthetic roofline data: held-out MAPE and table accuracy.
#include <cmath>
#include <random>

#include <catch2/catch.hpp>

#include "autoddl/calib/efficiency_fit.hpp"

using namespace autoddl::calib;

namespace {

constexpr double kPeak = 989e12;  // H100/H200 dense BF16 (calibration.md §3.5)
constexpr double kHbm = 3.35e12;

// A smooth "true" efficiency: small GEMMs cannot fill the GPU, big ones approach 80%.
double true_eff(double flops) { return 0.8 / (1 + std::pow(3e9 / flops, 0.6)); }

// Every (M, N, K) of a grid, bf16, time = roofline max(compute, memory) with ±noise.
std::vector<KernelSample> roofline_grid(double noise, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-noise, noise);
  std::vector<KernelSample> out;
  const double dims[] = {128, 256, 512, 1024, 2048, 4096, 8192};
  for (double m : dims) {
    for (double n : dims) {
      for (double k : dims) {
        double flops = 2 * m * n * k;
        double bytes = 2 * (m * k + k * n + m * n);
        double t = std::max(flops / (kPeak * true_eff(flops)), bytes / kHbm);
        out.push_back({flops, bytes, t * (1 + u(rng))});
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("the GEMM efficiency fit predicts held-out shapes within 5% MAPE on roofline data",
          "[calib][efficiency]") {
  EfficiencyFitOptions opt;
  opt.hbm_bytes_per_s = kHbm;
  opt.holdout_every = 5;
  EfficiencyFit fit = fit_efficiency(roofline_grid(0.02, 11), kPeak, opt);
  CHECK(fit.shapes == 343);
  REQUIRE(fit.holdout_mape);
  CHECK(*fit.holdout_mape < 0.05);
  CHECK(fit.train_mape < 0.05);
}

TEST_CASE("the fitted efficiency table follows the true curve at its points",
          "[calib][efficiency]") {
  EfficiencyFitOptions opt;
  opt.hbm_bytes_per_s = kHbm;
  EfficiencyFit fit = fit_efficiency(roofline_grid(0, 1), kPeak, opt);
  REQUIRE(fit.points.size() >= 8);
  for (const auto& p : fit.points) {
    CAPTURE(p.flops);
    CHECK(p.efficiency == Approx(true_eff(p.flops)).epsilon(0.03));
  }
}

TEST_CASE("without the memory roof, memory-bound shapes make the fit worse, not wrong",
          "[calib][efficiency]") {
  // The cost model's max(compute, memory) is what makes the table accurate: dropping it (no
  // HBM bandwidth known) leaves the FLOPs-only table to absorb skinny shapes.
  EfficiencyFitOptions with, without;
  with.hbm_bytes_per_s = kHbm;
  auto samples = roofline_grid(0, 1);
  double mape_with = fit_efficiency(samples, kPeak, with).train_mape;
  double mape_without = fit_efficiency(samples, kPeak, without).train_mape;
  CHECK(mape_with < mape_without);
  CHECK(mape_without < 0.5);
}

TEST_CASE("predicted kernel time is the roofline max of compute and memory",
          "[calib][efficiency]") {
  std::vector<autoddl::costmodel::EfficiencyPoint> table = {{1e9, 0.5}};
  KernelSample k{1e9, 1e6, 0};
  CHECK(predicted_kernel_time_s(table, 1e12, 0, k) == Approx(2e-3));
  CHECK(predicted_kernel_time_s(table, 1e12, 1e8, k) == Approx(1e-2));  // memory-bound
}
