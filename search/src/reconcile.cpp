// The reconciled objective (see reconcile.hpp).
#include "reconcile.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/search/assignment.hpp"
#include "autoddl/search/scheme_map.hpp"

namespace autoddl::search {

namespace {

// The same tables (configuration, stages, capacities) at another sync weight.
std::unique_ptr<CostTables> at_weight(const CostTables& base, double w) {
  TableOptions o = base.options();
  o.sync_weight = w;
  auto t = std::make_unique<CostTables>(base.graph(), base.cluster(), o);
  for (int s = 0; s < base.stages(); ++s) t->set_capacity_bytes(s, base.capacity_bytes(s));
  return t;
}

}  // namespace

nlohmann::json Reconciled::details() const {
  nlohmann::json j = {{"sync_weight", sync_weight},
                      {"objective_s", objective_s},
                      {"iteration_s", report.iteration_s},
                      {"start_objective_s", start_objective_s},
                      {"rounds", rounds},
                      {"moves", moves},
                      {"improved", improved},
                      {"converged", converged},
                      {"seconds", seconds}};
  if (!gap_reason.empty()) j["gap"] = gap_reason;
  return j;
}

Reconciled reconcile_objective(const CostTables& base, bool tie_layers, const std::vector<int>& choice,
                               const costmodel::CostReport& report, const CdOptions& opt, int max_rounds,
                               const SchemeOf& as_scheme) {
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  Reconciled r;
  r.choice = choice;
  r.report = report;
  r.sync_weight = base.options().sync_weight;
  r.start_objective_s = recompute_objective(base, choice).total();
  r.objective_s = r.start_objective_s;
  if (!report.feasible) {
    r.gap_reason = "the scheme does not fit: the objective carries the memory penalty";
    return r;
  }
  if (base.stages() > 1) {
    // Σ over stages is the surrogate for the slowest stage: no sync weight turns a sum into a max.
    r.gap_reason = "a pipeline's tables sum the work of its " + std::to_string(base.stages()) +
                   " stages, evaluate() takes the slowest stage and the bubble; no sync weight matches them";
    return r;
  }
  // T_0 and S per scheme from the tables at weight 0 and at the base weight w_b > 0 (the
  // objective is linear in w: S = (T_b − T_0) / w_b), or at weight 1 when w_b is 0.
  const double w_b = base.options().sync_weight;
  const auto zero = at_weight(base, 0);
  const std::unique_ptr<CostTables> one = w_b > 0 ? nullptr : at_weight(base, 1);
  const CostTables& at_b = w_b > 0 ? base : *one;
  const double per_w = w_b > 0 ? w_b : 1;
  std::unique_ptr<CostTables> cur;
  double solved_at_w = -1;
  // Solves w* at r.choice and builds the tables at it; false when there is no sync to weigh.
  auto solve = [&] {
    const double t_0 = recompute_objective(*zero, r.choice).time_s;
    const double sync_s = (recompute_objective(at_b, r.choice).time_s - t_0) / per_w;
    if (!(sync_s > 1e-9 * std::max(1e-12, r.report.iteration_s))) {
      r.gap_reason = "the scheme has no gradient sync to weigh";
      return false;
    }
    const double w = (r.report.iteration_s - t_0) / sync_s;
    const double clamped = std::clamp(w, 0.0, kMaxSyncWeight);
    r.gap_reason.clear();
    if (clamped != w) {
      r.gap_reason = "the weight that would match evaluate() is " + std::to_string(w) + ", outside [0, " +
                     std::to_string(kMaxSyncWeight) + "]";
    }
    r.sync_weight = clamped;
    if (clamped != solved_at_w) cur = at_weight(base, clamped);
    solved_at_w = clamped;
    r.objective_s = recompute_objective(*cur, r.choice).total();
    return true;
  };
  for (bool go = solve(); go && r.rounds < max_rounds && elapsed() < opt.time_limit_s;) {
    ++r.rounds;
    const Coordinates co = make_coordinates(*cur, tie_layers);
    Assignment a(*cur, r.choice);
    CdOptions o = opt;
    o.time_limit_s = std::max(0.0, opt.time_limit_s - elapsed());
    o.progress = nullptr;
    const CdStats st = coordinate_descent(a, co, o);
    r.moves += st.moves + st.joint_moves + st.window_moves + st.region_moves;
    if (a.choice() == r.choice) {
      r.converged = true;
      break;
    }
    const costmodel::CostReport rep = costmodel::evaluate(
        base.graph(), base.cluster(), as_scheme ? as_scheme(a.choice()) : to_scheme(base, a.choice(), "reconciled"));
    if (!costmodel::ranks_above(rep, r.report)) break;  // the surrogate's step is no step: keep x
    r.choice = a.choice();
    r.report = rep;
    r.improved = true;
    go = solve();
  }
  r.seconds = elapsed();
  return r;
}

}  // namespace autoddl::search
