// α-β fitting: recovery of known α, β from synthetic data, band choice, held-out error.
#include <cmath>
#include <random>

#include <catch2/catch.hpp>

#include "autoddl/calib/alpha_beta_fit.hpp"

using namespace autoddl::calib;

namespace {

// Sizes 8 B .. 4 GiB by factor 2, as nccl-tests -b 8 -e 4G -f 2.
std::vector<double> sweep() {
  std::vector<double> s;
  for (double b = 8; b <= 4.0 * (1ull << 30); b *= 2) s.push_back(b);
  return s;
}

std::vector<SizeTime> line(double alpha, double beta, double noise, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-noise, noise);
  std::vector<SizeTime> pts;
  for (double b : sweep()) pts.push_back({b, (alpha + beta * b) * (1 + u(rng))});
  return pts;
}

double rel(double got, double want) { return std::abs(got - want) / want; }

}  // namespace

TEST_CASE("the weighted fit recovers alpha and beta exactly from noiseless data", "[calib][fit]") {
  auto pts = line(25e-6, 1 / 150e9, 0, 1);
  AlphaBeta ab = fit_alpha_beta(pts);
  CHECK(rel(ab.alpha_s, 25e-6) < 1e-9);
  CHECK(rel(ab.beta_s_per_byte, 1 / 150e9) < 1e-9);
  auto q = fit_quality(ab, pts);
  CHECK(q.r2 == Approx(1.0).margin(1e-12));
  CHECK(q.max_rel_error < 1e-9);
}

TEST_CASE("the weighted fit recovers alpha and beta within 1% from data with +-1% noise",
          "[calib][fit]") {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    CAPTURE(seed);
    auto pts = line(25e-6, 1 / 150e9, 0.01, seed);
    AlphaBeta ab = fit_alpha_beta(pts);
    CHECK(rel(ab.alpha_s, 25e-6) < 0.01);
    CHECK(rel(ab.beta_s_per_byte, 1 / 150e9) < 0.01);
    CHECK(fit_quality(ab, pts).max_rel_error < 0.025);
  }
}

TEST_CASE("weighting by 1/t keeps small messages accurate where an unweighted fit would not",
          "[calib][fit]") {
  // With α = 5 us and 8 GiB at 100 GB/s (86 ms), an unweighted fit of α drifts by the noise of
  // the largest point (~1 ms); the relative fit still predicts 8 B within 1%.
  auto pts = line(5e-6, 1 / 100e9, 0.01, 7);
  AlphaBeta ab = fit_alpha_beta(pts);
  CHECK(rel(ab.time_s(8), 5e-6 + 8 / 100e9) < 0.01);
}

TEST_CASE("alpha is clamped at zero when the data is a pure bandwidth line", "[calib][fit]") {
  std::vector<SizeTime> pts;
  for (double b : sweep()) {
    if (b >= 1 << 20) pts.push_back({b, b / 50e9 * (b == (1 << 20) ? 0.97 : 1.0)});
  }
  AlphaBeta ab = fit_alpha_beta(pts);
  CHECK(ab.alpha_s == 0);
  CHECK(rel(ab.beta_s_per_byte, 1 / 50e9) < 0.01);
}

TEST_CASE("one size gives alpha = its time and beta = 0", "[calib][fit]") {
  std::vector<SizeTime> pts = {{4096, 10e-6}};
  AlphaBeta ab = fit_alpha_beta(pts);
  CHECK(ab.alpha_s == Approx(10e-6));
  CHECK(ab.beta_s_per_byte == 0);
}

TEST_CASE("fit_group uses one band when one line is within the tolerance", "[calib][fit]") {
  auto g = fit_group(line(25e-6, 1 / 150e9, 0.01, 3), BandOptions{});
  REQUIRE(g.bands.size() == 1);
  CHECK(g.bands[0].from_bytes == 0);
  CHECK(rel(g.bands[0].alpha_s, 25e-6) < 0.01);
}

TEST_CASE("fit_group splits into protocol bands and recovers each band's alpha and beta",
          "[calib][fit]") {
  // LL up to 64 KiB, LL128 up to 8 MiB, Simple beyond (NCCL-like switch points).
  struct Band {
    double from, alpha, beta;
  } truth[] = {{0, 10e-6, 1 / 2e9}, {65536 * 1.5, 20e-6, 1 / 40e9}, {(8 << 20) * 1.5, 50e-6, 1 / 180e9}};
  std::vector<SizeTime> pts;
  for (double b : sweep()) {
    const Band* t = &truth[0];
    for (const Band& band : truth) {
      if (b >= band.from) t = &band;
    }
    pts.push_back({b, t->alpha + t->beta * b});
  }
  GroupFit g = fit_group(pts, BandOptions{});
  REQUIRE(g.bands.size() == 3);
  for (int i = 0; i < 3; ++i) {
    CAPTURE(i);
    CHECK(rel(g.bands[i].alpha_s, truth[i].alpha) < 0.01);
    CHECK(rel(g.bands[i].beta_s_per_byte, truth[i].beta) < 0.01);
    CHECK(g.bands[i].fit->max_rel_error < 1e-6);
  }
  // Boundaries fall between the last size of one band and the first of the next.
  CHECK(g.bands[1].from_bytes > 65536);
  CHECK(g.bands[1].from_bytes < 131072);
  CHECK(g.bands[2].from_bytes > 8 << 20);
  CHECK(g.bands[2].from_bytes < 16 << 20);
}

TEST_CASE("held-out error is reported for the bands and for table interpolation",
          "[calib][fit]") {
  BandOptions opt;
  opt.holdout_every = 4;
  GroupFit g = fit_group(line(25e-6, 1 / 150e9, 0.01, 5), opt);
  REQUIRE(g.holdout_rel_error);
  REQUIRE(g.holdout_interp_rel_error);
  CHECK(*g.holdout_rel_error < 0.02);         // about the noise
  CHECK(*g.holdout_interp_rel_error < 0.03);  // two noisy neighbours
  CHECK(g.bands[0].fit->holdout_rel_error);

  opt.holdout_every = 0;
  GroupFit none = fit_group(line(25e-6, 1 / 150e9, 0.01, 5), opt);
  CHECK_FALSE(none.holdout_rel_error);
}

TEST_CASE("R2 drops below 1 when a line cannot explain the data", "[calib][fit]") {
  std::vector<SizeTime> pts = {{1e3, 10e-6}, {1e4, 30e-6}, {1e5, 12e-6}, {1e6, 40e-6}};
  auto q = fit_quality(fit_alpha_beta(pts), pts);
  CHECK(q.r2 < 0.9);
  CHECK(q.max_rel_error > 0.1);
}
