// The fixed expert baselines dp, zero1, zero3 and owt, rows of costmodel's expert scheme table
// (expert_schemes.hpp): a row that does not apply to the graph is skipped with its reason;
// make_scheme lowers the others to per-op signatures on the search's mesh and evaluate() prices
// them; one that cannot be built (fewer samples than GPUs) is an unavailable, infeasible result
// with the reason. One file for four rows because they differ only in the scheme name.
#include <chrono>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/search/searcher.hpp"

namespace autoddl::search::methods {

namespace {

std::vector<SearchResult> expert(SearchContext& ctx, const std::string& name, std::string& skip) {
  const costmodel::ExpertSchemeRow* row = costmodel::find_expert_scheme(name);
  if (row && row->not_applicable) {
    skip = row->not_applicable(ctx.graph());
    if (!skip.empty()) return {};
  }
  const auto t0 = std::chrono::steady_clock::now();
  SearchResult r;
  r.method = name;
  try {
    r.scheme = costmodel::make_scheme(name, ctx.graph(), ctx.cluster(), ctx.mesh_shape());
  } catch (const InputError& e) {  // e.g. fewer samples than data-parallel GPUs
    r.unavailable = e.reason();
    r.report.feasible = false;
    r.report.infeasible_reason = e.reason();
    r.search_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return {r};
  }
  r.report = costmodel::evaluate(ctx.graph(), ctx.cluster(), r.scheme);
  r.search_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return {r};
}

}  // namespace

std::vector<SearchResult> run_dp(SearchContext& ctx, std::string& skip) { return expert(ctx, "dp", skip); }
std::vector<SearchResult> run_zero1(SearchContext& ctx, std::string& skip) { return expert(ctx, "zero1", skip); }
std::vector<SearchResult> run_zero3(SearchContext& ctx, std::string& skip) { return expert(ctx, "zero3", skip); }

std::vector<SearchResult> run_owt(SearchContext& ctx, std::string& skip) { return expert(ctx, "owt", skip); }

}  // namespace autoddl::search::methods
