// Coordinate descent, plain and neighbourhood (see coordinate_descent.hpp). All work buffers
// are sized once per call; the sweeps and the joint searches allocate nothing.
#include "autoddl/search/coordinate_descent.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <string>

namespace autoddl::search {

Coordinates make_coordinates(const CostTables& t, bool tie_layers) {
  const auto& g = t.graph();
  const int n = t.ops();
  std::vector<std::vector<int>> groups;
  std::vector<int> group_of(n, -1);
  if (tie_layers) {
    // Blocks in order of first appearance, each with its ops.
    std::map<std::string, int> block_id;
    std::vector<std::vector<int>> block_ops;
    for (int i = 0; i < n; ++i) {
      const std::string& b = g.ops[i].block;
      if (b.empty()) continue;
      auto [it, fresh] = block_id.emplace(b, static_cast<int>(block_ops.size()));
      if (fresh) block_ops.emplace_back();
      block_ops[it->second].push_back(i);
    }
    std::map<std::vector<int>, std::vector<int>> by_structure;  // class sequence -> blocks
    for (size_t b = 0; b < block_ops.size(); ++b) {
      std::vector<int> key;
      for (int op : block_ops[b]) key.push_back(t.class_of(op));
      by_structure[key].push_back(static_cast<int>(b));
    }
    for (const auto& [key, blocks] : by_structure) {
      if (blocks.size() < 2) continue;
      for (size_t p = 0; p < key.size(); ++p) {
        std::vector<int> members;
        for (int b : blocks) members.push_back(block_ops[b][p]);
        for (int op : members) group_of[op] = static_cast<int>(groups.size());
        groups.push_back(std::move(members));
      }
    }
  }
  for (int i = 0; i < n; ++i) {
    if (group_of[i] < 0) {
      group_of[i] = static_cast<int>(groups.size());
      groups.push_back({i});
    }
  }
  // Coordinates in topological order of their first op.
  std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a[0] < b[0]; });
  Coordinates co;
  co.of_op.assign(n, -1);
  co.op_begin.push_back(0);
  for (size_t k = 0; k < groups.size(); ++k) {
    for (int op : groups[k]) {
      co.ops.push_back(op);
      co.of_op[op] = static_cast<int>(k);
    }
    co.op_begin.push_back(static_cast<int>(co.ops.size()));
    if (groups[k].size() > 1) ++co.tied_groups;
  }
  std::vector<int> stamp(t.terms(), -1), nstamp(groups.size(), -1);
  co.term_begin.push_back(0);
  co.nbr_begin.push_back(0);
  for (int k = 0; k < co.size(); ++k) {
    for (int j = co.op_begin[k]; j < co.op_begin[k + 1]; ++j) {
      int nt = 0;
      const int* terms = t.op_terms(co.ops[j], nt);
      for (int x = 0; x < nt; ++x) {
        const int term = terms[x];
        if (stamp[term] == k) continue;
        stamp[term] = k;
        co.terms.push_back(term);
        const int* mem = t.term_members(term);
        for (int y = 0; y < t.term(term).count; ++y) {
          const int other = co.of_op[mem[y]];
          if (other == k || nstamp[other] == k) continue;
          nstamp[other] = k;
          co.nbrs.push_back(other);
        }
      }
    }
    co.term_begin.push_back(static_cast<int>(co.terms.size()));
    co.nbr_begin.push_back(static_cast<int>(co.nbrs.size()));
  }
  return co;
}

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMaxNbh = 4;

class Descent {
 public:
  Descent(Assignment& a, const Coordinates& co, const CdOptions& opt)
      : a_(a), t_(a.tables()), co_(co), opt_(opt), start_(Clock::now()), last_report_(start_) {
    int max_members = 1, max_choices = 1;
    for (int k = 0; k < co.size(); ++k) {
      max_members = std::max(max_members, co.op_begin[k + 1] - co.op_begin[k]);
      max_choices = std::max(max_choices, t_.choices(co.ops[co.op_begin[k]]));
    }
    cvec_.assign(static_cast<size_t>(max_members) * kMaxNbh, 0);
    jops_.assign(static_cast<size_t>(max_members) * kMaxNbh, 0);
    pos_.assign(co.size(), -1);
    term_stamp_.assign(t_.terms(), -1);
    term_mask_.assign(t_.terms(), 0);
    for (int j = 0; j < kMaxNbh; ++j) {
      unary_[j].assign(max_choices, 0);
      order_[j].assign(max_choices, 0);
    }
    dmem_.assign(t_.stages(), 0);
    uterms_.reserve(256);
    for (int j = 0; j < kMaxNbh; ++j) {
      unary_terms_[j].reserve(64);
      multi_terms_[j].reserve(64);
    }
    for (int j = 0; j < kMaxWindow; ++j) {
      wu_[j].assign(max_choices, 0);
      wf_[j].assign(max_choices + 1, 0);
      wcand_[j].assign(max_choices + 1, 0);
      warg_[j].assign(max_choices + 1, 0);
      wunary_[j].reserve(32);
      wpair_[j].reserve(32);
    }
    wnew_.assign(static_cast<size_t>(max_members) * kMaxWindow, 0);
    wsorted_.assign(max_choices + 1, 0);
    if (static_cast<int>(cvec_.size()) < max_members * kMaxWindow) {
      cvec_.assign(static_cast<size_t>(max_members) * kMaxWindow, 0);
      jops_.assign(static_cast<size_t>(max_members) * kMaxWindow, 0);
    }
    in_queue_.assign(co.size(), 0);
    queue_.assign(co.size() + 1, 0);
  }

  CdStats run() {
    stats_.start_objective_s = a_.objective();
    const int rounds = opt_.neighbourhood ? 8 : 1;
    for (int r = 0; r < rounds && !out_of_time(); ++r) {
      sweeps();
      if (!opt_.neighbourhood) break;
      bool any = neighbourhoods();
      if (opt_.window_size >= 2) any |= windows();
      if (!any) break;  // neither joint move improved: a fixed point of all three
    }
    stats_.objective_s = a_.objective();
    stats_.seconds = elapsed();
    return stats_;
  }

 private:
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  bool out_of_time() {
    if (elapsed() > opt_.time_limit_s) stats_.time_limit_hit = true;
    return stats_.time_limit_hit;
  }
  double eps() const { return 1e-12 * (std::fabs(a_.objective()) + 1e-9); }
  void report() {
    if (!opt_.progress) return;
    auto now = Clock::now();
    if (std::chrono::duration<double>(now - last_report_).count() < 0.5) return;
    last_report_ = now;
    opt_.progress(a_.objective(), stats_.sweeps);
  }

  const int* members(int k, int& n) const {
    n = co_.op_begin[k + 1] - co_.op_begin[k];
    return &co_.ops[co_.op_begin[k]];
  }
  const int* terms(int k, int& n) const {
    n = co_.term_begin[k + 1] - co_.term_begin[k];
    return &co_.terms[co_.term_begin[k]];
  }

  // Plain CD step: the best choice of coordinate k with everything else fixed.
  bool improve(int k) {
    int n = 0, nt = 0;
    const int* ops = members(k, n);
    const int* tm = terms(k, nt);
    const int K = t_.choices(ops[0]);
    double best = -eps();
    int best_c = -1;
    for (int c = 0; c < K; ++c) {
      bool same = true;
      for (int j = 0; j < n; ++j) {
        cvec_[j] = c;
        same = same && a_.choice(ops[j]) == c;
      }
      if (same) continue;
      const double d = a_.delta(ops, cvec_.data(), n, tm, nt);
      if (d < best) {
        best = d;
        best_c = c;
      }
    }
    if (best_c < 0) return false;
    for (int j = 0; j < n; ++j) cvec_[j] = best_c;
    a_.move(ops, cvec_.data(), n, tm, nt);
    ++stats_.moves;
    return true;
  }

  void sweeps() {
    const int n = co_.size();
    while (stats_.sweeps < opt_.max_sweeps && !out_of_time()) {
      bool moved = false;
      for (int k = 0; k < n; ++k) moved |= improve(k);
      for (int k = n - 1; k >= 0; --k) moved |= improve(k);
      ++stats_.sweeps;
      report();
      if (!moved) break;
    }
  }

  // ---- neighbourhood mode ----

  void push(int k) {
    if (in_queue_[k]) return;
    in_queue_[k] = 1;
    queue_[q_tail_] = k;
    q_tail_ = (q_tail_ + 1) % static_cast<int>(queue_.size());
  }

  bool neighbourhoods() {
    bool any = false;
    q_head_ = q_tail_ = 0;
    for (int k = 0; k < co_.size(); ++k) push(k);
    long pops = 0;
    const long max_pops = 8L * co_.size() + 16;
    while (q_head_ != q_tail_ && pops < max_pops) {
      if ((pops & 63) == 0 && out_of_time()) break;
      const int u = queue_[q_head_];
      q_head_ = (q_head_ + 1) % static_cast<int>(queue_.size());
      in_queue_[u] = 0;
      ++pops;
      if (joint(u)) {
        any = true;
        // Re-examine the changed coordinates and their neighbours.
        for (int j = 0; j < nbh_n_; ++j) {
          push(nbh_[j]);
          for (int x = co_.nbr_begin[nbh_[j]]; x < co_.nbr_begin[nbh_[j] + 1]; ++x) push(co_.nbrs[x]);
        }
      }
      if ((pops & 255) == 0) report();
    }
    return any;
  }

  // Picks up to neighbourhood_size coordinates breadth-first from u.
  void pick(int u) {
    const int cap = std::clamp(opt_.neighbourhood_size, 1, kMaxNbh);
    nbh_n_ = 0;
    nbh_[nbh_n_++] = u;
    pos_[u] = 0;
    for (int head = 0; head < nbh_n_ && nbh_n_ < cap; ++head) {
      const int v = nbh_[head];
      for (int x = co_.nbr_begin[v]; x < co_.nbr_begin[v + 1] && nbh_n_ < cap; ++x) {
        const int w = co_.nbrs[x];
        if (pos_[w] >= 0) continue;
        pos_[w] = nbh_n_;
        nbh_[nbh_n_++] = w;
      }
    }
  }

  void set_members(int j, int c) {
    int n = 0;
    const int* ops = members(nbh_[j], n);
    int* ch = a_.scratch_choice();
    for (int x = 0; x < n; ++x) ch[ops[x]] = c;
  }

  // Joint branch and bound over the neighbourhood of u; applies an improving assignment.
  bool joint(int u) {
    pick(u);
    ++stats_.neighbourhoods;
    const int k = nbh_n_;
    bool improved = false;
    if (k >= 2) improved = joint_search(k);
    for (int j = 0; j < k; ++j) pos_[nbh_[j]] = -1;
    return improved;
  }

  bool joint_search(int k) {
    ++stamp_;
    uterms_.clear();
    for (int j = 0; j < kMaxNbh; ++j) {
      unary_terms_[j].clear();
      multi_terms_[j].clear();
    }
    // Terms touching the neighbourhood, classified by which members they touch.
    for (int j = 0; j < k; ++j) {
      int nt = 0;
      const int* tm = terms(nbh_[j], nt);
      for (int x = 0; x < nt; ++x) {
        const int term = tm[x];
        if (term_stamp_[term] == stamp_) continue;
        term_stamp_[term] = stamp_;
        uterms_.push_back(term);
        unsigned mask = 0;
        const int* mem = t_.term_members(term);
        for (int y = 0; y < t_.term(term).count; ++y) {
          const int p = pos_[co_.of_op[mem[y]]];
          if (p >= 0) mask |= 1u << p;
        }
        term_mask_[term] = static_cast<uint8_t>(mask);
        int last = 0;
        while ((mask >> (last + 1)) != 0) ++last;
        if ((mask & (mask - 1)) == 0) unary_terms_[last].push_back(term);
        else multi_terms_[last].push_back(term);
      }
    }
    // The current local cost (the incumbent).
    int* ch = a_.scratch_choice();
    int n_ops = 0;
    for (int j = 0; j < k; ++j) {
      int n = 0;
      const int* ops = members(nbh_[j], n);
      for (int x = 0; x < n; ++x) {
        jops_[n_ops] = ops[x];
        cvec_[n_ops] = ch[ops[x]];  // saved current choices, restored below
        ++n_ops;
      }
    }
    double current = a_.penalty_s();
    for (int x = 0; x < n_ops; ++x) current += t_.node_s(jops_[x], cvec_[x]);
    for (int term : uterms_) current += a_.term_value(term);
    // Unary costs per member and candidate, best first, current choice always kept.
    double suffix = 0;
    for (int j = k - 1; j >= 0; --j) {
      int n = 0;
      const int* ops = members(nbh_[j], n);
      const int K = t_.choices(ops[0]);
      for (int c = 0; c < K; ++c) {
        set_members(j, c);
        double u = 0;
        for (int x = 0; x < n; ++x) u += t_.node_s(ops[x], c);
        for (int term : unary_terms_[j]) u += t_.term_cost(term, ch);
        unary_[j][c] = u;
        order_[j][c] = c;
      }
      restore(n_ops);
      std::sort(order_[j].begin(), order_[j].begin() + K,
                [&](int x, int y) { return unary_[j][x] < unary_[j][y]; });
      int keep = std::min(K, std::max(1, opt_.candidates_per_member));
      const int cur = ch[ops[0]];
      bool has_cur = false;
      for (int x = 0; x < keep; ++x) has_cur |= order_[j][x] == cur;
      if (!has_cur) {
        for (int x = keep; x < K; ++x) {
          if (order_[j][x] == cur) {
            std::rotate(order_[j].begin() + keep, order_[j].begin() + x, order_[j].begin() + x + 1);
            ++keep;
            break;
          }
        }
      }
      n_cand_[j] = keep;
      suffix += unary_[j][order_[j][0]];
      suffix_min_[j] = suffix;
    }
    suffix_min_[k] = 0;
    best_ = current - eps();
    found_ = false;
    nodes_ = 0;
    dfs(0, 0.0, k, n_ops);
    restore(n_ops);
    if (!found_) return false;
    // Apply: every member op takes its coordinate's best choice.
    int x = 0;
    for (int j = 0; j < k; ++j) {
      int n = 0;
      members(nbh_[j], n);
      for (int y = 0; y < n; ++y) cvec_[x++] = best_pick_[j];
    }
    a_.move(jops_.data(), cvec_.data(), n_ops, uterms_.data(), static_cast<int>(uterms_.size()));
    ++stats_.joint_moves;
    return true;
  }

  // Restores the neighbourhood's ops to the choices saved in cvec_.
  void restore(int n_ops) {
    int* ch = a_.scratch_choice();
    for (int x = 0; x < n_ops; ++x) ch[jops_[x]] = cvec_[x];
  }

  void dfs(int j, double acc, int k, int n_ops) {
    int* ch = a_.scratch_choice();
    for (int x = 0; x < n_cand_[j]; ++x) {
      if (++nodes_ > opt_.node_budget) return;
      const int c = order_[j][x];
      const double base = acc + unary_[j][c];
      if (base + suffix_min_[j + 1] >= best_) break;  // candidates are sorted by unary cost
      set_members(j, c);
      pick_[j] = c;
      double cost = base;
      for (int term : multi_terms_[j]) cost += t_.term_cost(term, ch);
      if (cost + suffix_min_[j + 1] >= best_) continue;
      if (j + 1 < k) {
        dfs(j + 1, cost, k, n_ops);
        continue;
      }
      // Leaf: add the memory penalty of the whole neighbourhood's change.
      const double total = cost + penalty_of_picks(k, n_ops);
      if (total < best_) {
        best_ = total;
        found_ = true;
        for (int l = 0; l < k; ++l) best_pick_[l] = pick_[l];
      }
    }
  }

  // Penalty if the neighbourhood took pick_[]; the assignment's current choices are in cvec_.
  double penalty_of_picks(int k, int n_ops) {
    int* ch = a_.scratch_choice();
    std::fill(dmem_.begin(), dmem_.end(), 0.0);
    // Memory change of each op from its saved choice to its pick.
    int x = 0;
    for (int l = 0; l < k; ++l) {
      int n = 0;
      const int* ops = members(nbh_[l], n);
      for (int z = 0; z < n; ++z, ++x) {
        const int now = ch[ops[z]];
        ch[ops[z]] = cvec_[x];  // memory_delta reads the current choice from the assignment
        a_.memory_delta(&ops[z], &pick_[l], 1, dmem_.data());
        ch[ops[z]] = now;
      }
    }
    (void)n_ops;
    return a_.penalty_with(dmem_.data());
  }

  // ---- chain windows: exact DP over a path of coordinates, everything else fixed ----

  // Grows a window downstream from u while every term it touches meets at most the previous
  // window coordinate (so the window's terms form a path).
  int grow_window(int u) {
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

  bool windows() {
    bool any = false;
    for (int u = 0; u < co_.size(); ++u) {
      if ((u & 63) == 0 && out_of_time()) break;
      const int n = grow_window(u);
      if (n >= 2 && window_dp(n)) any = true;
      for (int j = 0; j < n; ++j) pos_[win_[j]] = -1;
    }
    return any;
  }

  bool window_dp(int n) {
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
        for (int x = 0; x < m; ++x) ch[ops[x]] = c;
        double v = 0;
        for (int x = 0; x < m; ++x) v += t_.node_s(ops[x], c);
        for (int term : wunary_[j]) v += t_.term_cost(term, ch);
        u[c] = v;
        order[c] = c;
      }
      restore(n_ops);
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
    if (same) return false;
    const double d = a_.delta(jops_.data(), wnew_.data(), n_ops, uterms_.data(), static_cast<int>(uterms_.size()));
    if (d >= -eps()) return false;
    a_.move(jops_.data(), wnew_.data(), n_ops, uterms_.data(), static_cast<int>(uterms_.size()));
    ++stats_.window_moves;
    return true;
  }

  static constexpr int kMaxWindow = 16;
  int win_[kMaxWindow] = {};
  int wn_[kMaxWindow] = {}, best_win_[kMaxWindow] = {};
  std::vector<int> wunary_[kMaxWindow], wpair_[kMaxWindow];
  std::vector<double> wu_[kMaxWindow], wf_[kMaxWindow];
  std::vector<int> wcand_[kMaxWindow], warg_[kMaxWindow];
  std::vector<int> wnew_, wsorted_;

  Assignment& a_;
  const CostTables& t_;
  const Coordinates& co_;
  const CdOptions& opt_;
  Clock::time_point start_, last_report_;
  CdStats stats_;
  std::vector<int> cvec_, jops_, pos_, term_stamp_;
  std::vector<uint8_t> term_mask_;
  std::vector<int> uterms_;
  std::vector<int> unary_terms_[kMaxNbh], multi_terms_[kMaxNbh];
  std::vector<double> unary_[kMaxNbh];
  std::vector<int> order_[kMaxNbh];
  int n_cand_[kMaxNbh] = {};
  double suffix_min_[kMaxNbh + 1] = {};
  int pick_[kMaxNbh] = {}, best_pick_[kMaxNbh] = {};
  int nbh_[kMaxNbh] = {}, nbh_n_ = 0;
  double best_ = 0;
  bool found_ = false;
  long nodes_ = 0;
  int stamp_ = 0;
  std::vector<double> dmem_;
  std::vector<uint8_t> in_queue_;
  std::vector<int> queue_;
  int q_head_ = 0, q_tail_ = 0;
};

}  // namespace

CdStats coordinate_descent(Assignment& a, const Coordinates& co, const CdOptions& opt) {
  Descent d(a, co, opt);
  return d.run();
}

}  // namespace autoddl::search
