// Runs a list of methods on one SearchContext and ranks the results (see searcher.hpp).
#include <algorithm>
#include <chrono>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/search/searcher.hpp"

namespace autoddl::search {

SearchRun run_search(const costmodel::Graph& g, const costmodel::ClusterSpec& c, const SearchOptions& opt,
                     const std::vector<std::string>& methods) {
  std::vector<const Searcher*> plan;
  auto add = [&](const Searcher* s) {
    if (std::find(plan.begin(), plan.end(), s) == plan.end()) plan.push_back(s);
  };
  for (const std::string& m : methods) {
    if (m == "all") {
      for (const Searcher& s : searchers()) add(&s);
    } else if (m == "baselines") {
      for (const Searcher& s : searchers()) {
        if (s.baseline) add(&s);
      }
    } else if (const Searcher* s = find_searcher(m)) {
      add(s);
    } else {
      std::string known;
      for (const Searcher& s : searchers()) known += std::string(known.empty() ? "" : ", ") + std::string(s.name);
      throw InputError("--method", "", "unknown method '" + m + "' (known: " + known + ", baselines, all)");
    }
  }
  // Registry order (pointers into the one table): descent first, so the ILP is warm-started
  // from its best assignment.
  std::sort(plan.begin(), plan.end());

  SearchContext ctx(g, c, opt);
  SearchRun run;
  for (const Searcher* s : plan) {
    std::string skip;
    std::vector<SearchResult> got = s->run(ctx, skip);
    if (got.empty()) run.skipped.emplace_back(std::string(s->name), skip.empty() ? "no result" : skip);
    for (SearchResult& r : got) run.results.push_back(std::move(r));
  }
  bool used_tables = false;
  for (const SearchResult& r : run.results) {
    used_tables |= r.objective_s.has_value();
    // Both are lower bounds of the same objective: the higher is the tighter.
    if ((r.method == "ilp" || r.method == "ilp-tied") && r.bound_s && (!run.ilp_bound_s || *r.bound_s > *run.ilp_bound_s)) {
      run.ilp_bound_s = r.bound_s;
    }
  }
  if (run.ilp_bound_s) {
    for (SearchResult& r : run.results) {
      if (r.objective_s && !r.bound_s) r.bound_s = run.ilp_bound_s;
    }
  }
  if (used_tables) run.config = ctx.config();
  std::stable_sort(run.results.begin(), run.results.end(), [](const SearchResult& a, const SearchResult& b) {
    if (a.unavailable.empty() != b.unavailable.empty()) return a.unavailable.empty();
    if (a.report.feasible != b.report.feasible) return a.report.feasible;
    return a.report.iteration_s < b.report.iteration_s;
  });
  return run;
}

}  // namespace autoddl::search
