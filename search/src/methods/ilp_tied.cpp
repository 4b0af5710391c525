// `ilp-tied`: the certificate at scale (ilp_tied.hpp). One ILP per layer class (the first layer,
// the repeated layers, the ops outside layers) with free copies of the neighbours' boundary ops
// and memory priced by Lagrange gives a lower bound of the table objective over schemes that
// fit; the layer solution replicated is the method's scheme, proven optimal when its objective
// meets the bound. The bound is of the same tables' objective as `ilp`'s, so it is reported as
// every table method's bound and gap.
#include <chrono>

#include "autoddl/search/ilp_tied.hpp"
#include "autoddl/search/searcher.hpp"

namespace autoddl::search::methods {

std::vector<SearchResult> run_ilp_tied(SearchContext& ctx, std::string& skip) {
  const auto t0 = std::chrono::steady_clock::now();
  const CostTables& t = ctx.tables();
  ctx.progress("ilp-tied: one ILP per layer class with CBC (time limit " +
               std::to_string(static_cast<int>(ctx.options().time_limit_s)) + " s)");
  TiedBoundOptions opt;
  opt.time_limit_s = ctx.options().time_limit_s;
  opt.progress = [&](const std::string& line) { ctx.progress(line); };
  const TiedBound b = tied_layer_bound(t, opt);
  if (b.choice.empty()) {
    skip = "no part ILP was solved within the time limit";
    return {};
  }
  SearchResult res =
      ctx.result("ilp-tied", b.choice, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  res.bound_s = b.bound_s;
  res.optimal = b.optimal;
  res.note = b.optimal ? "optimal (" + std::to_string(b.classes) + " layer classes)"
                       : "lower bound from " + std::to_string(b.classes) + " layer classes";
  res.details = {{"bound_s", b.bound_s},
                 {"objective_s", b.objective_s},
                 {"optimal", b.optimal},
                 {"fits", b.fits},
                 {"exact_parts", b.exact_parts},
                 {"parts", b.parts},
                 {"classes", b.classes},
                 {"part_solves", b.solves},
                 {"consistency_steps", b.consistency_steps},
                 {"largest_part_columns", b.columns},
                 {"memory_price_s_per_gb", b.memory_price_s_per_byte * 1e9},
                 {"seconds", b.seconds}};
  return {res};
}

}  // namespace autoddl::search::methods
