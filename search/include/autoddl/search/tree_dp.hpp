// Exact dynamic programming for graphs whose coordinates interact like a chain (an MLP, a CNN
// without skips) or a tree: when every term touches at most two coordinates and those pairs
// form a forest, min Σ node + Σ term is solved leaf-up, f(k, c) = unary(k, c) + Σ_children
// min_c' [pair(k, c; j, c') + f(j, c')], in O(Σ_edges K_k·K_j). The memory penalty is not in
// the recursion: the result is the optimum of the full objective exactly when it fits memory.
#pragma once
#include <string>
#include <vector>

#include "autoddl/search/coordinate_descent.hpp"
#include "autoddl/search/cost_tables.hpp"

namespace autoddl::search {

struct TreeDpResult {
  bool applicable = false;
  std::string why_not;       // when not applicable: the first term or cycle that breaks it
  bool exact = false;        // applicable and the result fits memory (penalty 0)
  std::vector<int> choice;
  double objective_s = 0;    // table objective of `choice`, penalty included
  double seconds = 0;
};

TreeDpResult tree_dp(const CostTables& t, const Coordinates& co);

}  // namespace autoddl::search
