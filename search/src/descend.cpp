// Descent from every seed (see descend.hpp).
#include "descend.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <optional>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/search/assignment.hpp"
#include "parallel.hpp"
#include "reconcile.hpp"

namespace autoddl::search {

SearchResult descend_from_seeds(SearchContext& ctx, const std::string& method, const CdOptions& base,
                                int joint_from_best) {
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  const CostTables& t = ctx.tables();
  const Coordinates& co = ctx.coordinates();
  const std::vector<Seed>& seeds = ctx.seeds();
  const double limit = ctx.options().time_limit_s;
  const bool two_phase = base.neighbourhood && joint_from_best > 0;
  nlohmann::json per_seed = nlohmann::json::array();
  // The best scheme visited, by evaluate() (feasible first). Seeds count as visited: the table
  // objective is an additive surrogate, and evaluate() may rate a seed above its descent.
  std::vector<int> best;
  costmodel::CostReport best_report;
  std::string best_seed;
  auto judge = [&](const std::vector<int>& choice, const costmodel::CostReport& r, const std::string& label) {
    if (best.empty() || costmodel::ranks_above(r, best_report)) {
      best = choice;
      best_report = r;
      best_seed = label;
    }
  };
  auto descend = [&](Assignment& a, CdOptions opt, const std::string& label, size_t i) {
    opt.time_limit_s = std::max(0.0, limit - elapsed());
    opt.progress = [&](double obj, int sweeps) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "%s: seed %s (%zu/%zu), sweep %d, objective %.4f ms", method.c_str(),
                    label.c_str(), i + 1, seeds.size(), sweeps, obj * 1e3);
      ctx.progress(buf);
    };
    return coordinate_descent(a, co, opt);
  };
  // Phase one: every seed descends on its own (in parallel with --jobs); then, in seed order,
  // each start and end point is judged and offered, as one thread would have.
  const size_t n = seeds.size();
  std::vector<std::vector<int>> ends(n);
  std::vector<double> end_obj(n, 0);
  std::vector<CdStats> stats(n);
  std::vector<costmodel::CostReport> start_rep(n), end_rep(n);
  std::vector<char> done(n, 0);
  auto report_of = [&](const std::vector<int>& choice) {
    return costmodel::evaluate(t.graph(), t.cluster(), to_scheme(t, choice, method));
  };
  parallel_for(static_cast<int>(n), ctx.options().jobs, [&](int i) {
    if (i > 0 && elapsed() > limit) return;  // out of time: later seeds are not started
    const Seed& s = seeds[i];
    start_rep[i] = report_of(s.choice);
    Assignment a(t, s.choice);
    CdOptions opt = base;
    if (two_phase) opt.neighbourhood = false;
    stats[i] = descend(a, opt, s.name, i);
    end_rep[i] = report_of(a.choice());
    ends[i] = a.choice();
    end_obj[i] = stats[i].objective_s;
    done[i] = 1;
  });
  for (size_t i = 0; i < n && done[i]; ++i) {
    const Seed& s = seeds[i];
    const CdStats& st = stats[i];
    const costmodel::CostReport& r0 = start_rep[i];
    const costmodel::CostReport& r = end_rep[i];
    judge(s.choice, r0, s.name + " (its start: evaluate() rates it above the descents)");
    judge(ends[i], r, s.name);
    ctx.offer(ends[i], st.objective_s);
    per_seed.push_back({{"seed", s.name},
                        {"start_objective_s", st.start_objective_s},
                        {"start_iteration_s", r0.iteration_s},
                        {"start_feasible", r0.feasible},
                        {"objective_s", st.objective_s},
                        {"iteration_s", r.iteration_s},
                        {"feasible", r.feasible},
                        {"sweeps", st.sweeps},
                        {"moves", st.moves},
                        {"joint_moves", st.joint_moves},
                        {"window_moves", st.window_moves},
                        {"region_moves", st.region_moves},
                        {"neighbourhoods", st.neighbourhoods},
                        {"checks_skipped", st.checks_skipped},
                        {"checks_reused", st.checks_reused},
                        {"seconds", st.seconds},
                        {"time_limit_hit", st.time_limit_hit}});
  }
  if (two_phase) {  // neighbourhood moves from the best plain end points only
    std::vector<size_t> order(per_seed.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return end_obj[x] < end_obj[y]; });
    // Seeds that descended to the same end point would repeat the same neighbourhood descent:
    // keep the first of each, so the joint phase starts from joint_from_best distinct points.
    std::vector<size_t> distinct;
    for (size_t i : order) {
      bool seen = false;
      for (size_t j : distinct) seen |= ends[j] == ends[i];
      if (!seen) distinct.push_back(i);
    }
    order = distinct;
    const int picked = static_cast<int>(std::min<size_t>(order.size(), static_cast<size_t>(joint_from_best)));
    std::vector<std::vector<int>> joint_end(picked);
    std::vector<CdStats> joint_stats(picked);
    std::vector<costmodel::CostReport> joint_rep(picked);
    std::vector<char> joint_done(picked, 0);
    parallel_for(picked, ctx.options().jobs, [&](int r) {
      if (elapsed() > limit) return;
      const size_t i = order[r];
      Assignment a(t, ends[i]);
      joint_stats[r] = descend(a, base, seeds[i].name, i);
      joint_rep[r] = report_of(a.choice());
      joint_end[r] = a.choice();
      joint_done[r] = 1;
    });
    for (int r = 0; r < picked && joint_done[r]; ++r) {
      const size_t i = order[r];
      const CdStats& st = joint_stats[r];
      const costmodel::CostReport& rep = joint_rep[r];
      judge(joint_end[r], rep, seeds[i].name);
      ctx.offer(joint_end[r], st.objective_s);
      nlohmann::json& j = per_seed[i];
      end_obj[i] = st.objective_s;
      j["plain_objective_s"] = j["objective_s"];
      j["objective_s"] = st.objective_s;
      j["iteration_s"] = rep.iteration_s;
      j["feasible"] = rep.feasible;
      j["joint_moves"] = st.joint_moves;
      j["window_moves"] = st.window_moves;
      j["region_moves"] = st.region_moves;
      j["neighbourhoods"] = st.neighbourhoods;
      j["checks_skipped"] = j["checks_skipped"].get<long>() + st.checks_skipped;
      j["checks_reused"] = j["checks_reused"].get<long>() + st.checks_reused;
      j["seconds"] = j["seconds"].get<double>() + st.seconds;
    }
  }
  // One objective: the answer descended again under the sync weight at which the tables' objective
  // equals evaluate() there (reconcile.hpp); it replaces the answer only where evaluate() agrees.
  std::optional<Reconciled> rec;
  if (!best.empty() && ctx.options().reconcile_objective && elapsed() < limit) {
    ctx.progress(method + ": reconciling the objective with evaluate()");
    CdOptions ro = base;
    ro.time_limit_s = std::max(0.0, limit - elapsed());
    rec = reconcile_objective(t, ctx.options().tie_layers, best, best_report, ro);
    if (rec->improved) {
      best = rec->choice;
      best_report = rec->report;
      best_seed += ", then descended under the reconciled objective";
    }
  }
  SearchResult res = ctx.result(method, best, elapsed());
  for (size_t i = 0; i < per_seed.size(); ++i) {
    if (!res.best_objective_s || end_obj[i] < *res.best_objective_s) res.best_objective_s = end_obj[i];
  }
  res.note = "from seed " + best_seed;
  res.details = {{"seeds", per_seed},
                 {"best_seed", best_seed},
                 {"tie_layers", ctx.options().tie_layers},
                 {"tied_coordinates", co.tied_groups},
                 {"coordinates", co.size()}};
  if (rec) {
    res.reconciled_objective_s = rec->objective_s;
    res.details["reconciled"] = rec->details();
  }
  if (base.neighbourhood) res.details["neighbourhood_size"] = base.neighbourhood_size;
  if (two_phase) res.details["joint_from_best"] = joint_from_best;
  return res;
}

}  // namespace autoddl::search
