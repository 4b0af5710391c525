// NCCL-model fitting (see nccl_model_fit.hpp). Times inside are microseconds, NCCL's unit.
#include "autoddl/calib/nccl_model_fit.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>
#include <utility>

#include "autoddl/costmodel/error.hpp"

namespace autoddl::calib {

namespace {

using costmodel::CollectiveKind;
using costmodel::NcclAlgo;
using costmodel::NcclModelCalibration;
using costmodel::NcclProto;
using costmodel::NcclTuning;

constexpr double kMinEfficiency = 1e-3, kMaxEfficiency = 10;  // the loader's range

// One measured shape with NCCL's tables for it: as built from the cluster, with 1 us more
// latency, and with half the bandwidth (the three evaluations the linear form is read from).
struct Shape {
  const ShapePoints* points = nullptr;
  NcclTuning base, lat_plus_1us, half_bw;
  NcclRestriction only;  // the runs' NCCL_ALGO / NCCL_PROTO
};

struct Pair {
  NcclAlgo algo;
  NcclProto proto;
  friend bool operator==(const Pair&, const Pair&) = default;
};

struct Params {
  double efficiency = 1;
  double offset_us = 0;
  std::array<NcclModelCalibration::Protocol, costmodel::kNcclProtoCount> protocols{};
  NcclModelCalibration tier() const {
    NcclModelCalibration t;
    t.bw_efficiency = efficiency;
    t.latency_offset_s = offset_us * 1e-6;
    t.protocols = protocols;
    return t;
  }
};

// The logged pair in NCCL's model's terms; empty for what it does not model (CollNet).
std::optional<Pair> pair_of(const NcclChoice& c) {
  const std::optional<NcclAlgo> a = costmodel::parse_nccl_algo(c.algo);
  const std::optional<NcclProto> p = costmodel::parse_nccl_proto(c.proto);
  if (!a || !p) return std::nullopt;
  return Pair{*a, *p};
}

double time_us(const NcclTuning& t, CollectiveKind kind, double bytes, const Pair& p) {
  return costmodel::nccl_time(t, kind, bytes, p.algo, p.proto).time_s * 1e6;
}

// The logged pair of point i if NCCL's model offers it on this shape, else the fitted model's pick.
Pair pick(const Shape& s, size_t i, const NcclTuning& fitted, bool* logged = nullptr) {
  const SizeTime& pt = s.points->points[i];
  if (i < s.points->choices.size() && s.points->choices[i]) {
    if (std::optional<Pair> p = pair_of(*s.points->choices[i]); p && time_us(s.base, s.points->kind, pt.bytes, *p) >= 0) {
      if (logged) *logged = true;
      return *p;
    }
  }
  if (logged) *logged = false;
  const costmodel::NcclEstimate e = costmodel::nccl_choice(fitted, s.points->kind, pt.bytes, s.only);
  return {e.algo, e.proto};
}

double mean_rel_error(const Params& m, const std::vector<const Shape*>& shapes) {
  double sum = 0;
  size_t n = 0;
  for (const Shape* s : shapes) {
    const NcclTuning fitted = costmodel::apply_nccl_calibration(s->base, m.tier());
    for (size_t i = 0; i < s->points->points.size(); ++i) {
      const SizeTime& pt = s->points->points[i];
      const double t = time_us(fitted, s->points->kind, pt.bytes, pick(*s, i, fitted)) * 1e-6;
      sum += std::abs(t - pt.time_s) / pt.time_s;
      ++n;
    }
  }
  return n ? sum / n : 0;
}

// The linear terms of one point's time at its pair: t = l + c·δ + x·γ (γ = 1/η), measured y.
struct Row {
  double l, c, x, y;
  int proto;
};

// Least squares of t = l + c·δ + x·γ on relative error over `rows`: (δ us, η). δ may not make a
// chosen latency negative; 1/η stays in the loader's range.
std::pair<double, double> solve(const std::vector<const Row*>& rows) {
  const auto n = static_cast<Eigen::Index>(rows.size());
  Eigen::MatrixXd a(n, 2);
  Eigen::VectorXd b(n);
  double min_latency = std::numeric_limits<double>::infinity();
  for (Eigen::Index i = 0; i < n; ++i) {
    const Row& r = *rows[size_t(i)];
    a(i, 0) = r.c / r.y;
    a(i, 1) = r.x / r.y;
    b(i) = (r.y - r.l) / r.y;
    if (r.c > 0) min_latency = std::min(min_latency, r.l / r.c);
  }
  Eigen::Vector2d sol = a.colPivHouseholderQr().solve(b);
  const double lowest = std::isfinite(min_latency) ? -min_latency : 0;
  if (!sol.allFinite() || sol(0) < lowest || sol(1) < 1 / kMaxEfficiency || sol(1) > 1 / kMinEfficiency) {
    sol(0) = std::isfinite(sol(0)) ? std::max(sol(0), lowest) : 0;
    const Eigen::VectorXd rest = b - a.col(0) * sol(0);
    const double den = a.col(1).squaredNorm();
    sol(1) = den > 0 ? a.col(1).dot(rest) / den : 1;
  }
  return {sol(0), std::clamp(1 / std::max(sol(1), 1e-12), kMinEfficiency, kMaxEfficiency)};
}

// Each point's pair as `m` picks it, and its linear terms at that pair.
std::vector<Row> rows_at(const Params& m, const std::vector<const Shape*>& shapes, std::vector<Pair>& pairs) {
  std::vector<Row> rows;
  pairs.clear();
  for (const Shape* s : shapes) {
    const NcclTuning fitted = costmodel::apply_nccl_calibration(s->base, m.tier());
    for (size_t i = 0; i < s->points->points.size(); ++i) {
      const SizeTime& pt = s->points->points[i];
      const Pair p = pick(*s, i, fitted);
      const double t0 = time_us(s->base, s->points->kind, pt.bytes, p);
      const double bw = time_us(s->half_bw, s->points->kind, pt.bytes, p) - t0;
      const double lat = time_us(s->lat_plus_1us, s->points->kind, pt.bytes, p) - t0;
      pairs.push_back(p);
      rows.push_back({t0 - bw, lat, bw, pt.time_s * 1e6, int(p.proto)});
    }
  }
  return rows;
}

// Repeats `step` (a refit of `m` from each point's terms at the pair `m` picks) until the picks
// stop changing, at most 20 times.
template <class Step>
void refit_until_settled(Params& m, const std::vector<const Shape*>& shapes, Step step) {
  std::vector<Pair> previous, pairs;
  for (int iteration = 0; iteration < 20; ++iteration) {
    step(rows_at(m, shapes, pairs));
    if (pairs == previous) break;
    previous = pairs;
  }
}

// Least squares of t = L + c·δ + x·γ on relative error, γ = 1/η, with each point's pair fixed
// at what the current fit picks; repeated until the model's own picks stop changing. With
// `per_protocol`, then each protocol with at least two points gets its own (δ, η) the same way,
// the rest keep the tier's.
Params fit_shapes(const std::vector<const Shape*>& shapes, bool per_protocol) {
  Params m;
  auto of = [](const std::vector<Row>& rows, int proto) {
    std::vector<const Row*> out;
    for (const Row& r : rows) {
      if (proto < 0 || r.proto == proto) out.push_back(&r);
    }
    return out;
  };
  refit_until_settled(m, shapes, [&](const std::vector<Row>& rows) {
    std::tie(m.offset_us, m.efficiency) = solve(of(rows, -1));
  });
  if (!per_protocol) return m;
  refit_until_settled(m, shapes, [&](const std::vector<Row>& rows) {
    for (int p = 0; p < costmodel::kNcclProtoCount; ++p) {
      const std::vector<const Row*> own = of(rows, p);
      NcclModelCalibration::Protocol& tp = m.protocols[size_t(p)];
      tp = {};
      if (own.size() < 2) continue;
      tp.fitted = true;
      std::tie(tp.latency_offset_s, tp.bw_efficiency) = solve(own);
      tp.latency_offset_s *= 1e-6;
      tp.points = static_cast<int>(own.size());
    }
  });
  return m;
}

}  // namespace

costmodel::NcclModelBasis nccl_model_basis(const costmodel::ClusterSpec& c) {
  return {c.name, c.nccl ? c.nccl->arch : "", c.nccl ? c.nccl->nvlink_bw_GBps : 0, c.inter.nic_bw_bytes_per_s,
          c.inter.nics_per_node, c.gpus_per_node};
}

std::vector<NcclModelFitRow> fit_nccl_model(const costmodel::ClusterSpec& c, const std::vector<ShapePoints>& shapes,
                                            const NcclRestriction& only, bool per_protocol) {
  if (!c.nccl) throw InputError("--cluster", c.name, "has no nccl block: NCCL's model cannot be fitted to it");
  std::vector<Shape> all;
  all.reserve(shapes.size());
  for (const ShapePoints& s : shapes) {
    if (!costmodel::link_tier_collective(s.kind) || s.group.ranks < 2 || s.points.empty()) continue;
    Shape sh;
    sh.points = &s;
    sh.only = only;
    sh.base = costmodel::nccl_tuning(c, costmodel::nccl_comm_for(c, s.group, s.groups_per_node));
    if (only.any() && costmodel::nccl_choice(sh.base, s.kind, s.points.front().bytes, only).time_s < 0) {
      throw InputError(only.option(), only.name(),
                       "NCCL's model has no " + only.name() + " " + std::string(costmodel::collective_info(s.kind).name) +
                           " for " + std::to_string(s.group.ranks) + " ranks, " + std::to_string(s.group.ranks_per_node) +
                           " per node, on " + c.name);
    }
    NcclModelCalibration plus;
    plus.latency_offset_s = 1e-6;
    sh.lat_plus_1us = costmodel::apply_nccl_calibration(sh.base, plus);
    NcclModelCalibration half;
    half.bw_efficiency = 0.5;
    sh.half_bw = costmodel::apply_nccl_calibration(sh.base, half);
    all.push_back(std::move(sh));
  }
  // (inter-node, ranks per node, groups per node; 0, 1 inside a node) -> shapes
  std::map<std::tuple<bool, int, int>, std::vector<const Shape*>> tiers;
  for (const Shape& s : all) {
    const costmodel::CommGroup& g = s.points->group;
    const bool inter = g.ranks > g.ranks_per_node;
    tiers[{inter, inter ? g.ranks_per_node : 0, inter ? s.points->groups_per_node : 1}].push_back(&s);
  }
  std::vector<NcclModelFitRow> out;
  for (const auto& [key, members] : tiers) {
    NcclModelFitRow row;
    const Params m = fit_shapes(members, per_protocol);
    row.tier = m.tier();
    row.tier.inter_node = std::get<0>(key);
    row.tier.ranks_per_node = std::get<1>(key);
    row.tier.groups_per_node = std::get<2>(key);
    row.tier.shapes = static_cast<int>(members.size());
    row.tier.mean_rel_error = mean_rel_error(m, members);
    for (const Shape* s : members) {
      const NcclTuning fitted = costmodel::apply_nccl_calibration(s->base, m.tier());
      for (size_t i = 0; i < s->points->points.size(); ++i) {
        bool logged = false;
        pick(*s, i, fitted, &logged);
        ++row.tier.points;
        if (logged) ++row.tier.attributed_points;
        if (!logged && i < s->points->choices.size() && s->points->choices[i]) ++row.unusable_choices;
      }
    }
    row.tier.holdout_rel_error = leave_one_out(
        members, [](const Shape* s) -> const ShapePoints& { return *s->points; },
        [per_protocol](const std::vector<const Shape*>& rest, const Shape* s) {
          return mean_rel_error(fit_shapes(rest, per_protocol), {s});
        },
        row.holdout);
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace autoddl::calib
