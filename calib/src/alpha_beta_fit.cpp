// Weighted α-β least squares, band segmentation by dynamic programming over the sorted sizes,
// and held-out validation (see alpha_beta_fit.hpp).
#include "autoddl/calib/alpha_beta_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/Dense>

#include "autoddl/costmodel/error.hpp"

namespace autoddl::calib {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Σ((pred − t)/t)² of a line on points.
double weighted_sse(const AlphaBeta& ab, std::span<const SizeTime> points) {
  double s = 0;
  for (const SizeTime& p : points) {
    double e = (ab.time_s(p.bytes) - p.time_s) / p.time_s;
    s += e * e;
  }
  return s;
}

// One segmentation: `ends[b]` is one past the last point of band b.
struct Segmentation {
  std::vector<size_t> ends;
  double sse = kInf;
};

// Best split of sorted points into exactly `bands` runs of ≥ min_points each.
Segmentation segment(std::span<const SizeTime> pts, int bands, int min_points,
                     const std::vector<std::vector<double>>& cost) {
  size_t n = pts.size();
  std::vector<std::vector<double>> best(bands + 1, std::vector<double>(n + 1, kInf));
  std::vector<std::vector<size_t>> from(bands + 1, std::vector<size_t>(n + 1, 0));
  best[0][0] = 0;
  for (int b = 1; b <= bands; ++b) {
    for (size_t j = 1; j <= n; ++j) {
      for (size_t i = 0; i + min_points <= j; ++i) {
        if (best[b - 1][i] == kInf || cost[i][j] == kInf) continue;
        double c = best[b - 1][i] + cost[i][j];
        if (c < best[b][j]) {
          best[b][j] = c;
          from[b][j] = i;
        }
      }
    }
  }
  Segmentation s;
  if (best[bands][n] == kInf) return s;
  s.sse = best[bands][n];
  s.ends.resize(bands);
  size_t j = n;
  for (int b = bands; b >= 1; --b) {
    s.ends[b - 1] = j;
    j = from[b][j];
  }
  return s;
}

// Bands (without quality) for sorted points; the band count follows BandOptions.
std::vector<std::pair<std::span<const SizeTime>, AlphaBeta>> fit_segments(
    std::span<const SizeTime> pts, const BandOptions& opt) {
  size_t n = pts.size();
  int min_points = std::max(2, opt.min_points);
  int max_bands = std::max(1, std::min<int>(opt.max_bands, static_cast<int>(n) / min_points));
  if (max_bands <= 1) return {{pts, fit_alpha_beta(pts)}};

  std::vector<std::vector<double>> cost(n + 1, std::vector<double>(n + 1, kInf));
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + min_points; j <= n; ++j) {
      auto run = pts.subspan(i, j - i);
      cost[i][j] = weighted_sse(fit_alpha_beta(run), run);
    }
  }
  std::vector<std::pair<std::span<const SizeTime>, AlphaBeta>> result;
  for (int bands = 1; bands <= max_bands; ++bands) {
    Segmentation s = segment(pts, bands, min_points, cost);
    if (s.sse == kInf) continue;
    result.clear();
    double worst = 0;
    size_t begin = 0;
    for (size_t end : s.ends) {
      auto run = pts.subspan(begin, end - begin);
      AlphaBeta ab = fit_alpha_beta(run);
      worst = std::max(worst, fit_quality(ab, run).max_rel_error);
      result.push_back({run, ab});
      begin = end;
    }
    if (worst <= opt.tolerance) break;
  }
  return result;
}

// Where band `hi` takes over from band `lo`: where their lines cross if that lies strictly
// between the two bands' sizes (NCCL's tuner switches protocol where the next one becomes
// faster), else halfway between them in log-size.
double boundary(const std::pair<std::span<const SizeTime>, AlphaBeta>& lo,
                const std::pair<std::span<const SizeTime>, AlphaBeta>& hi) {
  double last = lo.first.back().bytes, first = hi.first.front().bytes;
  double dbeta = lo.second.beta_s_per_byte - hi.second.beta_s_per_byte;
  if (dbeta > 0) {
    double cross = (hi.second.alpha_s - lo.second.alpha_s) / dbeta;
    if (cross > last && cross < first) return cross;
  }
  return std::sqrt(last * first);
}

std::vector<costmodel::AlphaBetaBand> to_bands(
    const std::vector<std::pair<std::span<const SizeTime>, AlphaBeta>>& segs) {
  std::vector<costmodel::AlphaBetaBand> bands;
  for (size_t b = 0; b < segs.size(); ++b) {
    costmodel::AlphaBetaBand band;
    if (b > 0) band.from_bytes = boundary(segs[b - 1], segs[b]);
    band.alpha_s = segs[b].second.alpha_s;
    band.beta_s_per_byte = segs[b].second.beta_s_per_byte;
    band.fit = fit_quality(segs[b].second, segs[b].first);
    bands.push_back(band);
  }
  return bands;
}

double band_time(const std::vector<costmodel::AlphaBetaBand>& bands, double bytes) {
  costmodel::CollectiveCalibration c;
  c.bands = bands;
  return c.band_time_s(bytes);
}

}  // namespace

AlphaBeta fit_alpha_beta(std::span<const SizeTime> points) {
  AUTODDL_CHECK(!points.empty()) << "fit_alpha_beta needs at least one point";
  size_t n = points.size();
  double max_bytes = 0;
  for (const SizeTime& p : points) {
    AUTODDL_CHECK(p.time_s > 0) << "time must be positive, got " << p.time_s;
    max_bytes = std::max(max_bytes, p.bytes);
  }
  // α alone (β = 0): minimizes Σ((α − t)/t)².
  auto alpha_only = [&] {
    double num = 0, den = 0;
    for (const SizeTime& p : points) {
      num += 1 / p.time_s;
      den += 1 / (p.time_s * p.time_s);
    }
    return AlphaBeta{num / den, 0};
  };
  bool one_size = std::all_of(points.begin(), points.end(),
                              [&](const SizeTime& p) { return p.bytes == points[0].bytes; });
  if (n == 1 || one_size || max_bytes <= 0) return alpha_only();

  // Rows [1/t, (S/S_max)/t] · [α, β·S_max] = 1; the column scaling keeps QR well conditioned.
  Eigen::MatrixXd a(n, 2);
  Eigen::VectorXd rhs = Eigen::VectorXd::Ones(n);
  for (size_t i = 0; i < n; ++i) {
    a(i, 0) = 1 / points[i].time_s;
    a(i, 1) = points[i].bytes / max_bytes / points[i].time_s;
  }
  Eigen::Vector2d x = a.colPivHouseholderQr().solve(rhs);
  AlphaBeta ab{x(0), x(1) / max_bytes};
  if (ab.beta_s_per_byte < 0) return alpha_only();
  if (ab.alpha_s < 0) {  // β alone: minimizes Σ((β·S − t)/t)²
    double num = 0, den = 0;
    for (const SizeTime& p : points) {
      num += p.bytes / p.time_s;
      den += (p.bytes / p.time_s) * (p.bytes / p.time_s);
    }
    ab = {0, num / den};
  }
  return ab;
}

costmodel::FitQuality fit_quality(const AlphaBeta& ab, std::span<const SizeTime> points) {
  costmodel::FitQuality q;
  q.points = static_cast<int>(points.size());
  if (points.empty()) return q;
  double wsum = 0, wtsum = 0, ss_res = 0;
  for (const SizeTime& p : points) {
    double w = 1 / (p.time_s * p.time_s);
    wsum += w;
    wtsum += w * p.time_s;
    double e = (ab.time_s(p.bytes) - p.time_s) / p.time_s;
    ss_res += e * e;
    q.max_rel_error = std::max(q.max_rel_error, std::abs(e));
    q.mean_rel_error += std::abs(e);
  }
  q.mean_rel_error /= points.size();
  double mean = wtsum / wsum, ss_tot = 0;
  for (const SizeTime& p : points) {
    double d = p.time_s - mean;
    ss_tot += d * d / (p.time_s * p.time_s);
  }
  q.r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : (ss_res == 0 ? 1 : 0);
  return q;
}

GroupFit fit_group(std::vector<SizeTime> points, const BandOptions& opt) {
  AUTODDL_CHECK(!points.empty()) << "fit_group needs at least one point";
  std::sort(points.begin(), points.end(),
            [](const SizeTime& a, const SizeTime& b) { return a.bytes < b.bytes; });
  GroupFit g;
  g.bands = to_bands(fit_segments(points, opt));

  int k = opt.holdout_every;
  if (k < 2) return g;
  std::vector<SizeTime> train, held;
  for (size_t i = 0; i < points.size(); ++i) {
    (i % k == static_cast<size_t>(k - 1) ? held : train).push_back(points[i]);
  }
  if (held.empty() || train.size() < 2) return g;
  std::vector<costmodel::AlphaBetaBand> train_bands = to_bands(fit_segments(train, opt));
  costmodel::CollectiveCalibration table;
  for (const SizeTime& p : train) table.measured.push_back({p.bytes, p.time_s});

  double sum_ab = 0, sum_interp = 0;
  std::vector<double> band_sum(g.bands.size(), 0);
  std::vector<int> band_count(g.bands.size(), 0);
  for (const SizeTime& p : held) {
    double e_ab = std::abs(band_time(train_bands, p.bytes) - p.time_s) / p.time_s;
    sum_ab += e_ab;
    sum_interp += std::abs(table.measured_time_s(p.bytes) - p.time_s) / p.time_s;
    size_t b = 0;
    while (b + 1 < g.bands.size() && g.bands[b + 1].from_bytes <= p.bytes) ++b;
    band_sum[b] += e_ab;
    band_count[b] += 1;
  }
  g.holdout_rel_error = sum_ab / held.size();
  g.holdout_interp_rel_error = sum_interp / held.size();
  for (size_t b = 0; b < g.bands.size(); ++b) {
    if (band_count[b] > 0) g.bands[b].fit->holdout_rel_error = band_sum[b] / band_count[b];
  }
  return g;
}

}  // namespace autoddl::calib
