// Link-tier fitting (see link_tier_fit.hpp). Per point of p ranks and nccl-tests size S, the
// time is t = c + k·α + f·S·β with k = latency_steps(p), f = bw_factor(p), and c a fixed cost
// per collective (launch and NCCL's setup, which does not grow with the ring). Least squares on
// relative error over every point of the tier's shapes; c, α, β ≥ 0 by trying each subset of
// the three terms and keeping the best one whose coefficients are all non-negative.
#include "autoddl/calib/link_tier_fit.hpp"

#include <Eigen/Dense>

#include <cmath>
#include <limits>
#include <map>
#include <tuple>

namespace autoddl::calib {

namespace {

struct TierModel {
  double fixed_s = 0, alpha_s = 0, beta_s_per_byte = 0;
  double time_s(const ShapePoints& s, double bytes) const {
    const costmodel::CollectiveInfo& info = costmodel::collective_info(s.kind);
    return fixed_s + info.latency_steps(s.group.ranks) * alpha_s + info.bw_factor(s.group.ranks) * bytes * beta_s_per_byte;
  }
};

double mean_rel_error(const TierModel& m, const std::vector<const ShapePoints*>& shapes) {
  double sum = 0;
  size_t n = 0;
  for (const ShapePoints* s : shapes) {
    for (const SizeTime& p : s->points) {
      sum += std::abs(m.time_s(*s, p.bytes) - p.time_s) / p.time_s;
      ++n;
    }
  }
  return n ? sum / n : 0;
}

TierModel fit_shapes(const std::vector<const ShapePoints*>& shapes) {
  // Rows [1, k, f·S/S_max] / t · [c, α, β·S_max] = 1; the scaling keeps QR well conditioned.
  double max_bytes = 1;
  size_t n = 0;
  for (const ShapePoints* s : shapes) {
    for (const SizeTime& p : s->points) max_bytes = std::max(max_bytes, p.bytes), ++n;
  }
  Eigen::MatrixXd a(n, 3);
  size_t i = 0;
  for (const ShapePoints* s : shapes) {
    const costmodel::CollectiveInfo& info = costmodel::collective_info(s->kind);
    for (const SizeTime& p : s->points) {
      a(i, 0) = 1 / p.time_s;
      a(i, 1) = info.latency_steps(s->group.ranks) / p.time_s;
      a(i, 2) = info.bw_factor(s->group.ranks) * p.bytes / max_bytes / p.time_s;
      ++i;
    }
  }
  const Eigen::VectorXd ones = Eigen::VectorXd::Ones(static_cast<Eigen::Index>(n));
  TierModel best;
  double best_res = std::numeric_limits<double>::infinity();
  for (int mask = 1; mask < 8; ++mask) {
    std::vector<int> cols;
    for (int c = 0; c < 3; ++c) {
      if (mask & (1 << c)) cols.push_back(c);
    }
    Eigen::MatrixXd sub(a.rows(), static_cast<Eigen::Index>(cols.size()));
    for (size_t c = 0; c < cols.size(); ++c) sub.col(static_cast<Eigen::Index>(c)) = a.col(cols[c]);
    const Eigen::VectorXd x = sub.colPivHouseholderQr().solve(ones);
    if ((x.array() < 0).any() || !x.allFinite()) continue;
    const double res = (sub * x - ones).squaredNorm();
    if (res >= best_res) continue;
    best_res = res;
    double coef[3] = {0, 0, 0};
    for (size_t c = 0; c < cols.size(); ++c) coef[cols[c]] = x(static_cast<Eigen::Index>(c));
    best = {coef[0], coef[1], coef[2] / max_bytes};
  }
  return best;
}

}  // namespace

std::vector<LinkTierFitRow> fit_link_tiers(const std::vector<ShapePoints>& shapes) {
  // (inter-node, ranks per node (0 inside a node), groups per node) -> shapes
  std::map<std::tuple<bool, int, int>, std::vector<const ShapePoints*>> tiers;
  for (const ShapePoints& s : shapes) {
    if (!costmodel::link_tier_collective(s.kind) || s.group.ranks < 2 || s.points.empty()) continue;
    const bool inter = s.group.ranks > s.group.ranks_per_node;
    tiers[{inter, inter ? s.group.ranks_per_node : 0, inter ? s.groups_per_node : 1}].push_back(&s);
  }
  std::vector<LinkTierFitRow> out;
  for (const auto& [key, members] : tiers) {
    LinkTierFitRow row;
    row.tier.inter_node = std::get<0>(key);
    row.tier.ranks_per_node = std::get<1>(key);
    row.tier.groups_per_node = std::get<2>(key);
    const TierModel m = fit_shapes(members);
    row.tier.fixed_s = m.fixed_s;
    row.tier.alpha_s = m.alpha_s;
    row.tier.beta_s_per_byte = m.beta_s_per_byte;
    row.tier.shapes = static_cast<int>(members.size());
    row.tier.mean_rel_error = mean_rel_error(m, members);
    row.tier.holdout_rel_error = leave_one_out(
        members, [](const ShapePoints* s) -> const ShapePoints& { return *s; },
        [](const std::vector<const ShapePoints*>& rest, const ShapePoints* s) { return mean_rel_error(fit_shapes(rest), {s}); },
        row.holdout);
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace autoddl::calib
