// Descent from every seed (see descend.hpp).
#include "descend.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/search/assignment.hpp"

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
  auto judge = [&](const std::vector<int>& choice, const std::string& label) {
    costmodel::CostReport r = costmodel::evaluate(t.graph(), t.cluster(), to_scheme(t, choice, method));
    const bool better = best.empty() || (r.feasible && !best_report.feasible) ||
                        (r.feasible == best_report.feasible && r.iteration_s < best_report.iteration_s);
    if (better) {
      best = choice;
      best_report = r;
      best_seed = label;
    }
    return r;
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
  std::vector<std::vector<int>> ends(seeds.size());
  std::vector<double> end_obj(seeds.size(), 0);
  for (size_t i = 0; i < seeds.size(); ++i) {
    const Seed& s = seeds[i];
    const costmodel::CostReport r0 = judge(s.choice, s.name + " (its start: evaluate() rates it above the descents)");
    Assignment a(t, s.choice);
    CdOptions opt = base;
    if (two_phase) opt.neighbourhood = false;
    const CdStats st = descend(a, opt, s.name, i);
    const costmodel::CostReport r = judge(a.choice(), s.name);
    ctx.offer(a.choice(), st.objective_s);
    ends[i] = a.choice();
    end_obj[i] = st.objective_s;
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
                        {"neighbourhoods", st.neighbourhoods},
                        {"seconds", st.seconds},
                        {"time_limit_hit", st.time_limit_hit}});
    if (elapsed() > limit) break;
  }
  if (two_phase) {  // neighbourhood moves from the best plain end points only
    std::vector<size_t> order(per_seed.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return end_obj[x] < end_obj[y]; });
    for (size_t r = 0; r < order.size() && static_cast<int>(r) < joint_from_best && elapsed() <= limit; ++r) {
      const size_t i = order[r];
      Assignment a(t, ends[i]);
      const CdStats st = descend(a, base, seeds[i].name, i);
      const costmodel::CostReport rep = judge(a.choice(), seeds[i].name);
      ctx.offer(a.choice(), st.objective_s);
      nlohmann::json& j = per_seed[i];
      end_obj[i] = st.objective_s;
      j["plain_objective_s"] = j["objective_s"];
      j["objective_s"] = st.objective_s;
      j["iteration_s"] = rep.iteration_s;
      j["feasible"] = rep.feasible;
      j["joint_moves"] = st.joint_moves;
      j["window_moves"] = st.window_moves;
      j["neighbourhoods"] = st.neighbourhoods;
      j["seconds"] = j["seconds"].get<double>() + st.seconds;
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
  if (base.neighbourhood) res.details["neighbourhood_size"] = base.neighbourhood_size;
  if (two_phase) res.details["joint_from_best"] = joint_from_best;
  return res;
}

}  // namespace autoddl::search
