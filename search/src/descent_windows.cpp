// Chain windows: up to window_size coordinates along a downstream path (every term inside the
// window touches two consecutive members at most) solved exactly by dynamic programming with
// everything outside fixed, e.g. a whole linear -> bias -> GeLU -> linear -> bias run that
// single and 4-op moves cannot change at once. Accepted only if the full objective improves.
#include <algorithm>
#include <limits>

#include "descent.hpp"

namespace autoddl::search {

// Grows a window downstream from u while every term it touches meets at most the previous
// window coordinate (so the window's terms form a path).
int Descent::grow_window(int u) {
  const int cap = std::min(opt_.window_size, kMaxWindow);
  int n = 0;
  win_[n++] = u;
  pos_[u] = 0;
  while (n < cap) {
    const int last = win_[n - 1];
    int next = -1;
    for (int x = co_.nbr_begin[last]; x < co_.nbr_begin[last + 1]; ++x) {
      const int w = co_.nbrs[x];
      if (w > last && pos_[w] < 0 && (next < 0 || w < next)) next = w;
    }
    if (next < 0) break;
    bool path = true;
    int nt = 0;
    const int* tm = terms(next, nt);
    for (int x = 0; x < nt && path; ++x) {
      const int* mem = t_.term_members(tm[x]);
      for (int y = 0; y < t_.term(tm[x]).count && path; ++y) {
        const int k = co_.of_op[mem[y]];
        path = k == next || k == last || pos_[k] < 0;
      }
    }
    if (!path) break;
    pos_[next] = n;
    win_[n++] = next;
  }
  return n;
}

bool Descent::windows() {
  bool any = false;
  for (int u = 0; u < co_.size(); ++u) {
    if ((u & 63) == 0 && out_of_time()) break;
    const int n = grow_window(u);
    // A window whose DP kept the current choices keeps them while nothing it reads moves (its
    // DP weighs time only, so memory does not enter).
    if (n >= 2 && !still_empty(win_, n, window_empty_at_[u], false)) {
      const bool moved = window_dp(n);
      any |= moved;
      window_empty_at_[u] = win_same_ ? serial_ : -1;
    }
    for (int j = 0; j < n; ++j) pos_[win_[j]] = -1;
  }
  return any;
}

bool Descent::window_dp(int n) {
  win_same_ = false;
  ++stamp_;
  uterms_.clear();
  for (int j = 0; j < n; ++j) {
    wunary_[j].clear();
    wpair_[j].clear();
  }
  for (int j = 0; j < n; ++j) {
    int nt = 0;
    const int* tm = terms(win_[j], nt);
    for (int x = 0; x < nt; ++x) {
      const int term = tm[x];
      if (term_stamp_[term] == stamp_) continue;
      term_stamp_[term] = stamp_;
      uterms_.push_back(term);
      int hi = -1, lo = kMaxWindow;
      const int* mem = t_.term_members(term);
      for (int y = 0; y < t_.term(term).count; ++y) {
        const int p = pos_[co_.of_op[mem[y]]];
        if (p >= 0) {
          hi = std::max(hi, p);
          lo = std::min(lo, p);
        }
      }
      if (hi == lo) wunary_[hi].push_back(term);
      else wpair_[lo].push_back(term);  // lo and lo + 1 by construction
    }
  }
  // The same window, terms and choices came back empty since the last move (another layer).
  const bool memo = memo_on();
  if (memo) {
    check_key(2, win_, n);
    // memo_time_: the DP kept the current choices; memo_mem_: the full delta refused the DP's.
    if (const int seen = memo_lookup(true)) {
      ++stats_.checks_reused;
      win_same_ = seen == kMemoTime;
      return false;
    }
  }
  auto empty = [&] {
    if (memo) memo_store(win_same_);
    return false;
  };
  int* ch = a_.scratch_choice();
  int n_ops = 0;
  for (int j = 0; j < n; ++j) {
    int m = 0;
    const int* ops = members(win_[j], m);
    for (int x = 0; x < m; ++x) {
      jops_[n_ops] = ops[x];
      cvec_[n_ops++] = ch[ops[x]];
    }
  }
  // Candidates per coordinate: the best by unary cost, and the current choice.
  for (int j = 0; j < n; ++j) {
    int m = 0;
    const int* ops = members(win_[j], m);
    const int K = t_.choices(ops[0]);
    std::vector<double>& u = wu_[j];
    std::vector<int>& order = wcand_[j];
    for (int c = 0; c < K; ++c) {
      double v = 0;
      for (int x = 0; x < m; ++x) v += t_.node_s(ops[x], c);
      u[c] = v;
      order[c] = c;
    }
    for (int term : wunary_[j]) {
      const double* row = term_row(term, win_[j], K);
      for (int c = 0; c < K; ++c) u[c] += row[c];
    }
    int keep = opt_.window_candidates > 0 ? std::min(K, std::max(2, opt_.window_candidates)) : K;
    std::partial_sort(order.begin(), order.begin() + keep, order.begin() + K,
                      [&](int x, int y) { return u[x] < u[y]; });
    const int cur = ch[ops[0]];
    bool has = false;
    for (int x = 0; x < keep; ++x) has |= order[x] == cur;
    if (!has) order[keep++] = cur;
    wn_[j] = keep;
  }
  // Forward DP: f[j][x] = u_j(c_x) + min_y f[j-1][y] + pair(c_y, c_x). Pair costs are >= 0,
  // so scanning y by increasing f[j-1] stops at the first f[j-1][y] >= the best so far.
  for (int x = 0; x < wn_[0]; ++x) wf_[0][x] = wu_[0][wcand_[0][x]];
  for (int j = 1; j < n; ++j) {
    int ma = 0, mb = 0;
    const int* pa = members(win_[j - 1], ma);
    const int* pb = members(win_[j], mb);
    std::vector<int>& by_f = wsorted_;
    for (int y = 0; y < wn_[j - 1]; ++y) by_f[y] = y;
    std::sort(by_f.begin(), by_f.begin() + wn_[j - 1], [&](int p, int q) { return wf_[j - 1][p] < wf_[j - 1][q]; });
    for (int x = 0; x < wn_[j]; ++x) {
      const int cb = wcand_[j][x];
      for (int z = 0; z < mb; ++z) ch[pb[z]] = cb;
      double best = std::numeric_limits<double>::infinity();
      int arg = 0;
      for (int yy = 0; yy < wn_[j - 1]; ++yy) {
        const int y = by_f[yy];
        const double base = wf_[j - 1][y];
        if (base >= best) break;
        const int ca = wcand_[j - 1][y];
        for (int z = 0; z < ma; ++z) ch[pa[z]] = ca;
        double v = base;
        for (int term : wpair_[j - 1]) v += t_.term_cost(term, ch);
        if (v < best) {
          best = v;
          arg = y;
        }
      }
      wf_[j][x] = best + wu_[j][cb];
      warg_[j][x] = arg;
    }
  }
  restore(n_ops);
  int x = 0;
  for (int y = 1; y < wn_[n - 1]; ++y) {
    if (wf_[n - 1][y] < wf_[n - 1][x]) x = y;
  }
  for (int j = n - 1; j >= 0; --j) {
    best_win_[j] = wcand_[j][x];
    if (j > 0) x = warg_[j][x];
  }
  // Accept only a strict improvement of the full objective (memory penalty included).
  int y = 0;
  bool same = true;
  for (int j = 0; j < n; ++j) {
    int m = 0;
    members(win_[j], m);
    for (int z = 0; z < m; ++z, ++y) {
      same = same && cvec_[y] == best_win_[j];
      wnew_[y] = best_win_[j];
    }
  }
  win_same_ = same;
  if (same) return empty();
  const double d = a_.delta(jops_.data(), wnew_.data(), n_ops, uterms_.data(), static_cast<int>(uterms_.size()));
  if (d >= -eps()) return empty();
  apply(jops_.data(), wnew_.data(), n_ops, uterms_.data(), static_cast<int>(uterms_.size()));
  ++stats_.window_moves;
  return true;
}

}  // namespace autoddl::search
