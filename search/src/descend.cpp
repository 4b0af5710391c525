// Descent from every seed (see descend.hpp).
#include "descend.hpp"

#include <chrono>
#include <cstdio>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/search/assignment.hpp"

namespace autoddl::search {

SearchResult descend_from_seeds(SearchContext& ctx, const std::string& method, const CdOptions& base) {
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  const CostTables& t = ctx.tables();
  const Coordinates& co = ctx.coordinates();
  const std::vector<Seed>& seeds = ctx.seeds();
  const double limit = ctx.options().time_limit_s;
  nlohmann::json per_seed = nlohmann::json::array();
  std::vector<int> best;
  costmodel::CostReport best_report;
  std::string best_seed;
  for (size_t i = 0; i < seeds.size(); ++i) {
    const Seed& s = seeds[i];
    CdOptions opt = base;
    opt.time_limit_s = std::max(0.0, limit - elapsed());
    opt.progress = [&](double obj, int sweeps) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "%s: seed %s (%zu/%zu), sweep %d, objective %.4f ms", method.c_str(),
                    s.name.c_str(), i + 1, seeds.size(), sweeps, obj * 1e3);
      ctx.progress(buf);
    };
    Assignment a(t, s.choice);
    // The seed itself is a candidate too: evaluate() may rate it above the descent's end point
    // (the table objective is an additive surrogate), and the method returns the best scheme
    // it visited by evaluate(), so it is never slower than any of its seeds.
    const costmodel::CostReport r0 = costmodel::evaluate(t.graph(), t.cluster(), to_scheme(t, s.choice, method));
    const CdStats st = coordinate_descent(a, co, opt);
    const costmodel::CostReport r = costmodel::evaluate(t.graph(), t.cluster(), to_scheme(t, a.choice(), method));
    ctx.offer(a.choice(), st.objective_s);
    per_seed.push_back({{"seed", s.name},
                        {"start_objective_s", st.start_objective_s},
                        {"objective_s", st.objective_s},
                        {"start_iteration_s", r0.iteration_s},
                        {"start_feasible", r0.feasible},
                        {"iteration_s", r.iteration_s},
                        {"feasible", r.feasible},
                        {"sweeps", st.sweeps},
                        {"moves", st.moves},
                        {"joint_moves", st.joint_moves},
                        {"window_moves", st.window_moves},
                        {"neighbourhoods", st.neighbourhoods},
                        {"seconds", st.seconds},
                        {"time_limit_hit", st.time_limit_hit}});
    auto better = [&](const costmodel::CostReport& x) {
      return best.empty() || (x.feasible && !best_report.feasible) ||
             (x.feasible == best_report.feasible && x.iteration_s < best_report.iteration_s);
    };
    if (better(r)) {
      best = a.choice();
      best_report = r;
      best_seed = s.name;
    }
    if (better(r0)) {
      best = s.choice;
      best_report = r0;
      best_seed = s.name + " (its start: evaluate() rates it above the descent's end)";
    }
    if (elapsed() > limit) break;
  }
  SearchResult res = ctx.result(method, best, elapsed());
  res.note = "from seed " + best_seed;
  res.details = {{"seeds", per_seed},
                 {"best_seed", best_seed},
                 {"tie_layers", ctx.options().tie_layers},
                 {"tied_coordinates", co.tied_groups},
                 {"coordinates", co.size()}};
  if (base.neighbourhood) res.details["neighbourhood_size"] = base.neighbourhood_size;
  return res;
}

}  // namespace autoddl::search
