// Neighbourhood mode (OneFlow's NbhGreedyStrategy): up to 4 adjacent coordinates picked
// breadth-first from a work queue are optimized jointly by depth-first branch and bound over
// each member's best choices by unary cost (node + terms touching only it), bounding with the
// sum of the remaining members' best unary costs; an improvement re-queues the changed
// coordinates and their neighbours.
#include <algorithm>

#include "descent.hpp"

namespace autoddl::search {

void Descent::push(int k) {
  if (in_queue_[k]) return;
  in_queue_[k] = 1;
  queue_[q_tail_] = k;
  q_tail_ = (q_tail_ + 1) % static_cast<int>(queue_.size());
}

bool Descent::neighbourhoods() {
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
void Descent::pick(int u) {
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

void Descent::set_members(int j, int c) {
  int n = 0;
  const int* ops = members(nbh_[j], n);
  int* ch = a_.scratch_choice();
  for (int x = 0; x < n; ++x) ch[ops[x]] = c;
}

// Joint branch and bound over the neighbourhood of u; applies an improving assignment.
bool Descent::joint(int u) {
  pick(u);
  ++stats_.neighbourhoods;
  const int k = nbh_n_;
  bool improved = false;
  if (k >= 2 && !still_empty(nbh_, k, joint_empty_at_[u], true)) {
    improved = joint_search(k);
    joint_empty_at_[u] = improved ? -1 : empty_at(true);
  }
  for (int j = 0; j < k; ++j) pos_[nbh_[j]] = -1;
  return improved;
}

bool Descent::joint_search(int k) {
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
  // A term between members costs the same at every search-tree node with the same choices of
  // those members: each gets a table over them (the earlier members' choices, then this one's),
  // filled as the search visits it (a cell of another search's stamp is empty); a term whose
  // table would be too large is priced at every node.
  ++pair_stamp_;
  size_t pair_cells = 0;
  for (int j = 0; j < k; ++j) {
    multi_pair_[j].clear();
    for (int term : multi_terms_[j]) {
      const unsigned mask = term_mask_[term];
      PairTable p{0, {0, 0, 0}, {0, 0, 0}, static_cast<long>(pair_cells)};
      long cells = t_.choices(co_.ops[co_.op_begin[nbh_[j]]]);
      for (int l = j - 1; l >= 0; --l) {  // strides from the last earlier member backwards
        if (((mask >> l) & 1u) == 0) continue;
        p.lo[p.n] = l;
        p.stride[p.n] = cells;
        ++p.n;
        cells *= t_.choices(co_.ops[co_.op_begin[nbh_[l]]]);
      }
      if (cells > kMaxTermTable) p.n = -1;
      else pair_cells += static_cast<size_t>(cells);
      multi_pair_[j].push_back(p);
    }
  }
  if (pair_val_.size() < pair_cells) {
    pair_val_.resize(pair_cells);
    pair_at_.resize(pair_cells, 0);
  }
  // The same members, terms and choices came back empty since the last move (another layer).
  const bool memo = memo_on();
  const bool within_capacity = a_.penalty_s() <= 0;
  if (memo) {
    check_key(1, nbh_, k);
    if (memo_lookup(within_capacity) != 0) {
      ++stats_.checks_reused;
      return false;
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
      double u = 0;
      for (int x = 0; x < n; ++x) u += t_.node_s(ops[x], c);
      unary_[j][c] = u;
      order_[j][c] = c;
    }
    for (int term : unary_terms_[j]) {
      const double* v = term_row(term, nbh_[j], K);
      for (int c = 0; c < K; ++c) unary_[j][c] += v[c];
    }
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
  time_better_ = false;
  nodes_ = 0;
  dfs(0, 0.0, k, n_ops);
  restore(n_ops);
  if (!found_) {
    if (memo) memo_store(within_capacity && !time_better_ && nodes_ <= opt_.node_budget);
    return false;
  }
  // Apply: every member op takes its coordinate's best choice.
  int x = 0;
  for (int j = 0; j < k; ++j) {
    int n = 0;
    members(nbh_[j], n);
    for (int y = 0; y < n; ++y) cvec_[x++] = best_pick_[j];
  }
  apply(jops_.data(), cvec_.data(), n_ops, uterms_.data(), static_cast<int>(uterms_.size()));
  ++stats_.joint_moves;
  return true;
}

// Restores the neighbourhood's ops to the choices saved in cvec_.
void Descent::restore(int n_ops) {
  int* ch = a_.scratch_choice();
  for (int x = 0; x < n_ops; ++x) ch[jops_[x]] = cvec_[x];
}

void Descent::dfs(int j, double acc, int k, int n_ops) {
  if (j >= kMaxNbh) return;  // unreachable (k <= kMaxNbh); bounds the recursion for the compiler
  int* ch = a_.scratch_choice();
  for (int x = 0; x < n_cand_[j]; ++x) {
    if (++nodes_ > opt_.node_budget) return;
    const int c = order_[j][x];
    const double base = acc + unary_[j][c];
    if (base + suffix_min_[j + 1] >= best_) break;  // candidates are sorted by unary cost
    set_members(j, c);
    pick_[j] = c;
    double cost = base;
    for (size_t y = 0; y < multi_terms_[j].size(); ++y) {
      const PairTable& p = multi_pair_[j][y];
      if (p.n < 0) {
        cost += t_.term_cost(multi_terms_[j][y], ch);
        continue;
      }
      long cell = p.offset + c;
      for (int l = 0; l < p.n; ++l) cell += pick_[p.lo[l]] * p.stride[l];
      if (pair_at_[cell] != pair_stamp_) {
        pair_val_[cell] = t_.term_cost(multi_terms_[j][y], ch);
        pair_at_[cell] = pair_stamp_;
      }
      cost += pair_val_[cell];
    }
    if (cost + suffix_min_[j + 1] >= best_) continue;
    if (j + 1 < k) {
      dfs(j + 1, cost, k, n_ops);
      continue;
    }
    // Leaf: add the memory penalty of the whole neighbourhood's change.
    if (cost < best_) time_better_ = true;
    const double total = cost + penalty_of_picks(k, n_ops);
    if (total < best_) {
      best_ = total;
      found_ = true;
      for (int l = 0; l < k; ++l) best_pick_[l] = pick_[l];
    }
  }
}

// Penalty if the neighbourhood took pick_[]; the assignment's current choices are in cvec_.
double Descent::penalty_of_picks(int k, int n_ops) {
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

}  // namespace autoddl::search
