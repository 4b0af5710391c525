// `ilp`: the exact optimum of the table objective (Alpa's intra-op ILP, ilp.hpp) by COIN-OR CBC
// under --time-limit, warm-started from the best assignment any method found before it (or a
// quick CD). Reports the optimum, or its best solution with CBC's lower bound and the gap.
#include <chrono>

#include "autoddl/search/assignment.hpp"
#include "autoddl/search/ilp.hpp"
#include "autoddl/search/searcher.hpp"

namespace autoddl::search::methods {

std::vector<SearchResult> run_ilp(SearchContext& ctx, std::string& skip) {
  const auto t0 = std::chrono::steady_clock::now();
  const CostTables& t = ctx.tables();
  const Coordinates& co = ctx.coordinates();
  std::vector<int> warm;
  if (const std::vector<int>* inc = ctx.incumbent()) warm = *inc;
  // Under tying the warm start must give tied ops one choice: take each group's first op's.
  for (int k = 0; k < co.size() && !warm.empty(); ++k) {
    for (int j = co.op_begin[k] + 1; j < co.op_begin[k + 1]; ++j) warm[co.ops[j]] = warm[co.ops[co.op_begin[k]]];
  }
  ctx.progress("ilp: building and solving with CBC (time limit " +
               std::to_string(static_cast<int>(ctx.options().time_limit_s)) + " s)");
  IlpOptions opt;
  opt.time_limit_s = ctx.options().time_limit_s;
  opt.warm_start = warm.empty() ? nullptr : &warm;
  const IlpResult r = solve_ilp(t, co, opt);
  if (!r.has_solution) {
    skip = r.infeasible ? "CBC proved that no assignment fits the memory capacity"
                        : "CBC found no solution within the time limit";
    return {};
  }
  SearchResult res = ctx.result("ilp", r.choice, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  res.bound_s = r.bound_s;
  res.optimal = r.optimal;
  res.note = r.status;
  res.details = {{"status", r.status}, {"objective_s", r.objective_s}, {"bound_s", r.bound_s}, {"gap", r.gap},
                 {"columns", r.columns}, {"rows", r.rows}, {"binaries", r.binaries}, {"cbc_seconds", r.seconds},
                 {"warm_start", !warm.empty()}};
  return {res};
}

}  // namespace autoddl::search::methods
