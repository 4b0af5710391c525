// `chain-dp`: exact dynamic programming when the ops interact like a chain or a tree (MLPs, CNNs
// without skip connections, NCF); skipped, with the reason, on graphs with residuals or tensors
// read by several ops. Exact for the table objective whenever its result fits memory.
#include <chrono>

#include "autoddl/search/searcher.hpp"
#include "autoddl/search/tree_dp.hpp"

namespace autoddl::search::methods {

std::vector<SearchResult> run_chain_dp(SearchContext& ctx, std::string& skip) {
  const auto t0 = std::chrono::steady_clock::now();
  const TreeDpResult r = tree_dp(ctx.tables(), ctx.coordinates());
  if (!r.applicable) {
    skip = r.why_not;
    return {};
  }
  SearchResult res = ctx.result("chain-dp", r.choice, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  res.optimal = r.exact;
  if (r.exact) res.bound_s = r.objective_s;
  res.note = r.exact ? "optimal" : "memory binds: DP ignores it, result not proven optimal";
  res.details = {{"exact", r.exact}, {"dp_seconds", r.seconds}};
  return {res};
}

}  // namespace autoddl::search::methods
