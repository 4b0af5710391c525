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
  // Candidates that the pair terms read alike (group_candidates) are priced once: of a group of
  // y only the first in that order can be the argmin (the rest have f no lower and the same pair
  // costs), and every x of a group has the same min and argmin. Same result, fewer term_cost calls
  // (a GEMM's hundreds of choices on a 3-D mesh share far fewer boxing states).
  for (int x = 0; x < wn_[0]; ++x) wf_[0][x] = wu_[0][wcand_[0][x]];
  for (int j = 1; j < n; ++j) {
    int ma = 0, mb = 0;
    const int* pa = members(win_[j - 1], ma);
    const int* pb = members(win_[j], mb);
    std::vector<int>& by_f = wsorted_;
    for (int y = 0; y < wn_[j - 1]; ++y) by_f[y] = y;
    std::sort(by_f.begin(), by_f.begin() + wn_[j - 1], [&](int p, int q) { return wf_[j - 1][p] < wf_[j - 1][q]; });
    group_candidates(j - 1, wpair_[j - 1], wgroup_[0]);
    const int groups_b = group_candidates(j, wpair_[j - 1], wgroup_[1]);
    std::fill(wgarg_.begin(), wgarg_.begin() + groups_b, -1);
    for (int x = 0; x < wn_[j]; ++x) {
      const int cb = wcand_[j][x];
      const int gb = wgroup_[1][x];
      if (wgarg_[gb] >= 0) {
        wf_[j][x] = wgbest_[gb] + wu_[j][cb];
        warg_[j][x] = wgarg_[gb];
        continue;
      }
      for (int z = 0; z < mb; ++z) ch[pb[z]] = cb;
      double best = std::numeric_limits<double>::infinity();
      int arg = 0;
      ++wgserial_;
      for (int yy = 0; yy < wn_[j - 1]; ++yy) {
        const int y = by_f[yy];
        const double base = wf_[j - 1][y];
        if (base >= best) break;
        long& seen = wgseen_[wgroup_[0][y]];
        if (seen == wgserial_) continue;
        seen = wgserial_;
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
      wgbest_[gb] = best;
      wgarg_[gb] = arg;
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

// Ids for window j's candidates by their key: what each of `terms` reads of the window's members
// at the candidate's choice (CostTables::term_key); equal keys, one id. Returns the ids' count.
int Descent::group_candidates(int j, const std::vector<int>& terms, std::vector<int>& group) {
  const int coord = win_[j];
  const int n = wn_[j];
  if (!opt_.group_window_candidates) {  // every candidate its own group
    for (int x = 0; x < n; ++x) group[x] = x;
    return n;
  }
  int len = 0;
  uint64_t scratch[CostTables::kMaxTermKey];
  for (int term : terms) {
    const int* mem = t_.term_members(term);
    for (int l = 0; l < t_.term(term).count; ++l) {
      if (co_.of_op[mem[l]] == coord) len += t_.term_key(term, l, wcand_[j][0], scratch);
    }
  }
  if (wkey_.size() < static_cast<size_t>(n) * len) wkey_.resize(static_cast<size_t>(n) * len);
  for (int x = 0; x < n; ++x) {
    uint64_t* key = wkey_.data() + static_cast<size_t>(x) * len;
    const int c = wcand_[j][x];
    for (int term : terms) {
      const int* mem = t_.term_members(term);
      for (int l = 0; l < t_.term(term).count; ++l) {
        if (co_.of_op[mem[l]] == coord) key += t_.term_key(term, l, c, key);
      }
    }
    widx_[x] = x;
  }
  auto key_of = [&](int x) { return wkey_.data() + static_cast<size_t>(x) * len; };
  std::sort(widx_.begin(), widx_.begin() + n, [&](int p, int q) {
    return std::lexicographical_compare(key_of(p), key_of(p) + len, key_of(q), key_of(q) + len);
  });
  int groups = 0;
  for (int i = 0; i < n; ++i) {
    if (i > 0 && !std::equal(key_of(widx_[i]), key_of(widx_[i]) + len, key_of(widx_[i - 1]))) ++groups;
    group[widx_[i]] = groups;
  }
  return n > 0 ? groups + 1 : 0;
}

}  // namespace autoddl::search
