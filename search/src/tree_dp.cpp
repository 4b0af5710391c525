// Leaf-up DP over a forest of coordinates (see tree_dp.hpp).
#include "autoddl/search/tree_dp.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <numeric>

#include "autoddl/search/assignment.hpp"

namespace autoddl::search {

namespace {

int find(std::vector<int>& parent, int x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

}  // namespace

TreeDpResult tree_dp(const CostTables& t, const Coordinates& co) {
  const auto t0 = std::chrono::steady_clock::now();
  TreeDpResult r;
  const int n = co.size();
  std::vector<std::vector<int>> unary_terms(n);
  std::map<std::pair<int, int>, std::vector<int>> pair_terms;  // (a < b) -> terms
  for (int term = 0; term < t.terms(); ++term) {
    const int* mem = t.term_members(term);
    int a = -1, b = -1;
    for (int j = 0; j < t.term(term).count; ++j) {
      const int k = co.of_op[mem[j]];
      if (k == a || k == b) continue;
      if (a < 0) a = k;
      else if (b < 0) b = k;
      else {
        r.why_not = "a tensor read by several ops couples three or more ops through one term";
        return r;
      }
    }
    if (b < 0) unary_terms[a].push_back(term);
    else pair_terms[{std::min(a, b), std::max(a, b)}].push_back(term);
  }
  std::vector<int> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  std::vector<std::vector<int>> adj(n);
  for (const auto& [ab, terms] : pair_terms) {
    const int x = find(parent, ab.first), y = find(parent, ab.second);
    if (x == y) {
      r.why_not = "the op graph has a cycle (a skip or residual connection)";
      return r;
    }
    parent[x] = y;
    adj[ab.first].push_back(ab.second);
    adj[ab.second].push_back(ab.first);
  }
  r.applicable = true;

  std::vector<int> scratch(t.ops(), 0);
  auto set = [&](int k, int c) {
    for (int j = co.op_begin[k]; j < co.op_begin[k + 1]; ++j) scratch[co.ops[j]] = c;
  };
  auto K = [&](int k) { return t.choices(co.ops[co.op_begin[k]]); };
  // f[k][c]: best cost of k's subtree with k at c; arg[child][c_parent]: the child's best choice.
  std::vector<std::vector<double>> f(n);
  std::vector<std::vector<int>> arg(n);
  std::vector<int> order, par(n, -1);
  std::vector<char> seen(n, 0);
  for (int root = 0; root < n; ++root) {
    if (seen[root]) continue;
    std::vector<int> stack{root};
    seen[root] = 1;
    while (!stack.empty()) {  // preorder; processed in reverse for leaf-up
      const int k = stack.back();
      stack.pop_back();
      order.push_back(k);
      for (int j : adj[k]) {
        if (seen[j]) continue;
        seen[j] = 1;
        par[j] = k;
        stack.push_back(j);
      }
    }
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const int k = *it;
    f[k].assign(K(k), 0);
    for (int c = 0; c < K(k); ++c) {
      set(k, c);
      double u = 0;
      for (int j = co.op_begin[k]; j < co.op_begin[k + 1]; ++j) u += t.node_s(co.ops[j], c);
      for (int term : unary_terms[k]) u += t.term_cost(term, scratch.data());
      f[k][c] += u;
    }
    for (int j : adj[k]) {
      if (j == par[k]) continue;
      const std::vector<int>& terms = pair_terms[{std::min(k, j), std::max(k, j)}];
      arg[j].assign(K(k), 0);
      for (int c = 0; c < K(k); ++c) {
        set(k, c);
        double best = std::numeric_limits<double>::infinity();
        for (int cj = 0; cj < K(j); ++cj) {
          set(j, cj);
          double v = f[j][cj];
          for (int term : terms) v += t.term_cost(term, scratch.data());
          if (v < best) {
            best = v;
            arg[j][c] = cj;
          }
        }
        f[k][c] += best;
      }
    }
  }
  // Top-down: roots take their argmin, children follow their parent's choice.
  std::vector<int> pick(n, 0);
  for (int k : order) {
    if (par[k] < 0) pick[k] = static_cast<int>(std::min_element(f[k].begin(), f[k].end()) - f[k].begin());
    else pick[k] = arg[k][pick[par[k]]];
  }
  r.choice.assign(t.ops(), 0);
  for (int k = 0; k < n; ++k) {
    for (int j = co.op_begin[k]; j < co.op_begin[k + 1]; ++j) r.choice[co.ops[j]] = pick[k];
  }
  const Objective o = recompute_objective(t, r.choice);
  r.objective_s = o.total();
  r.exact = o.penalty_s == 0;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace autoddl::search
