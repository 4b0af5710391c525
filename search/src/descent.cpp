// Coordinate descent's engine: buffers, the round structure (sweeps, then neighbourhoods and
// windows until neither improves) and plain mode, where each coordinate takes its best choice
// with everything else fixed (see coordinate_descent.hpp).
#include "descent.hpp"

#include <algorithm>

namespace autoddl::search {

Descent::Descent(Assignment& a, const Coordinates& co, const CdOptions& opt)
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
    multi_pair_[j].reserve(64);
  }
  for (int j = 0; j < kMaxWindow; ++j) {
    wu_[j].assign(max_choices, 0);
    wf_[j].assign(max_choices + 1, 0);
    wcand_[j].assign(max_choices + 1, 0);
    warg_[j].assign(max_choices + 1, 0);
    wunary_[j].reserve(32);
    wpair_[j].reserve(32);
  }
  const int max_joint = std::max(kMaxWindow, kMaxRegion);
  wnew_.assign(static_cast<size_t>(max_members) * max_joint, 0);
  wsorted_.assign(max_choices + 1, 0);
  widx_.assign(max_choices + 1, 0);
  for (auto& g : wgroup_) g.assign(max_choices + 1, 0);
  wgarg_.assign(max_choices + 1, 0);
  wgbest_.assign(max_choices + 1, 0);
  wgseen_.assign(max_choices + 1, -1);
  if (static_cast<int>(cvec_.size()) < max_members * max_joint) {
    cvec_.assign(static_cast<size_t>(max_members) * max_joint, 0);
    jops_.assign(static_cast<size_t>(max_members) * max_joint, 0);
  }
  if (opt.neighbourhood) {
    size_t slots = 0;
    for (int term = 0; term < t_.terms(); ++term) {
      slots = std::max(slots, static_cast<size_t>(t_.term(term).first + t_.term(term).count));
    }
    row_stride_ = max_choices;
    // Not zeroed: a row is read only after term_row has priced it (row_at_ >= 0), and untouched
    // pages cost nothing (a GPT-3 descent prices a few percent of the slots).
    row_.reset(new double[slots * max_choices]);
    row_at_.assign(slots, -1);
    cvec_row_.assign(max_members, 0);
  }
  if (opt.neighbourhood && opt.region_moves) {
    build_replicas();
    region_seen_.assign(co.size(), 0);
    region_empty_at_.assign(t_.sbp_shape().size() * co.size(), -1);
  }
  changed_at_.assign(co.size(), 0);
  improve_empty_at_.assign(co.size(), -1);
  joint_empty_at_.assign(co.size(), -1);
  window_empty_at_.assign(co.size(), -1);
  mem_before_.assign(t_.stages(), 0);
  in_queue_.assign(co.size(), 0);
  queue_.assign(co.size() + 1, 0);
  uniform_ = co.reduced();
  for (int k = 0; k < co.size() && uniform_; ++k) {
    for (int j = co.op_begin[k] + 1; j < co.op_begin[k + 1] && uniform_; ++j) {
      uniform_ = a.choice(co.ops[j]) == a.choice(co.ops[co.op_begin[k]]);
    }
  }
}

void Descent::apply(const int* ops, const int* c, int n, const int* terms, int n_terms) {
  for (int s = 0; s < t_.stages(); ++s) mem_before_[s] = a_.memory_bytes(s);
  a_.move(ops, c, n, terms, n_terms);
  ++serial_;
  for (int j = 0; j < n; ++j) changed_at_[co_.of_op[ops[j]]] = serial_;
  for (int s = 0; s < t_.stages(); ++s) {
    if (a_.memory_bytes(s) < mem_before_[s]) mem_down_at_ = serial_;
  }
}

bool Descent::still_empty(const int* coords, int n, long at, bool weighs_memory) {
  if (at < 0 || !opt_.skip_repeated_checks) return false;
  if (weighs_memory && (mem_down_at_ > at || a_.penalty_s() > 0)) return false;
  for (int j = 0; j < n; ++j) {
    const int k = coords[j];
    if (changed_at_[k] > at) return false;
    for (int x = co_.nbr_begin[k]; x < co_.nbr_begin[k + 1]; ++x) {
      if (changed_at_[co_.nbrs[x]] > at) return false;
    }
  }
  ++stats_.checks_skipped;
  return true;
}

bool Descent::memo_on() {
  if (!opt_.memo_checks || co_.op_kind.empty()) return false;
  // memo_mem_'s outcomes depend on the choices in their keys and, through the memory penalty, on
  // every stage's memory. As for still_empty: while every stage stays within capacity and none
  // went down, an empty check stays empty (the penalty is convex), so they outlive moves; priced
  // with a stage over capacity they hold only until the next move. memo_time_'s outcomes depend
  // on their keys alone. A full memo starts over.
  const bool strict = a_.penalty_s() > 0;
  if (memo_serial_ != serial_ && (strict || memo_strict_ || mem_down_at_ > memo_serial_)) memo_mem_.clear();
  if (memo_mem_.size() > kMemoMaxEntries) memo_mem_.clear();
  if (memo_time_.size() > kMemoMaxEntries) memo_time_.clear();
  memo_serial_ = serial_;
  memo_strict_ = strict;
  return true;
}

const double* Descent::term_row(int term, int k, int K) {
  const Term& tm = t_.term(term);
  const int* mem = t_.term_members(term);
  int first = 0;
  while (co_.of_op[mem[first]] != k) ++first;
  const size_t slot = static_cast<size_t>(tm.first + first);
  double* row = &row_[slot * row_stride_];
  const long at = row_at_[slot];
  bool fresh = at >= 0;
  for (int y = 0; y < tm.count && fresh; ++y) {
    const int kk = co_.of_op[mem[y]];
    fresh = kk == k || changed_at_[kk] <= at;
  }
  if (fresh) return row;
  int* ch = a_.scratch_choice();
  int n = 0;
  const int* ops = members(k, n);
  for (int x = 0; x < n; ++x) cvec_row_[x] = ch[ops[x]];
  for (int c = 0; c < K; ++c) {
    for (int x = 0; x < n; ++x) ch[ops[x]] = c;
    row[c] = t_.term_cost(term, ch);
  }
  for (int x = 0; x < n; ++x) ch[ops[x]] = cvec_row_[x];
  row_at_[slot] = serial_;
  return row;
}

int Descent::memo_lookup(bool time_ok) const {
  const int n = static_cast<int>(key_.size());
  if (time_ok && memo_time_.contains(key_.data(), n, key_hash_)) return kMemoTime;
  return memo_mem_.contains(key_.data(), n, key_hash_) ? kMemoMem : 0;
}

void Descent::memo_store(bool time_only) {
  (time_only ? memo_time_ : memo_mem_).insert(key_.data(), static_cast<int>(key_.size()), key_hash_);
}

void Descent::check_key(int tag, const int* coords, int n) {
  key_.clear();
  key_.push_back(tag);
  key_.push_back(n);
  for (int j = 0; j < n; ++j) {
    int m = 0;
    const int* ops = members(coords[j], m);
    key_.push_back(m);
    for (int x = 0; x < m; ++x) {
      key_.push_back(co_.op_kind[ops[x]]);
      key_.push_back(a_.choice(ops[x]));
    }
  }
  for (int term : uterms_) {
    key_.push_back(co_.term_kind[term]);
    const int* mem = t_.term_members(term);
    for (int y = 0; y < t_.term(term).count; ++y) {
      key_.push_back(pos_[co_.of_op[mem[y]]]);
      key_.push_back(a_.choice(mem[y]));
    }
  }
  key_hash_ = CheckMemo::hash(key_.data(), static_cast<int>(key_.size()));
}

double Descent::delta_tied(int k, const int* ops, int n, int c) {
  const int r0 = co_.rop_begin[k], t0 = co_.rterm_begin[k];
  return a_.delta_tied(ops, n, c, &co_.rops[r0], &co_.rop_mult[r0], co_.rop_begin[k + 1] - r0, &co_.rterms[t0],
                       &co_.rterm_mult[t0], co_.rterm_begin[k + 1] - t0);
}

CdStats Descent::run() {
  stats_.start_objective_s = a_.objective();
  const int rounds = opt_.neighbourhood ? 8 : 1;
  for (int r = 0; r < rounds && !out_of_time(); ++r) {
    sweeps();
    if (!opt_.neighbourhood) break;
    bool any = neighbourhoods();
    if (opt_.window_size >= 2) any |= windows();
    if (opt_.region_moves) any |= regions();
    if (!any) break;  // neither joint move improved: a fixed point of all three
  }
  stats_.objective_s = a_.objective();
  stats_.seconds = elapsed();
  return stats_;
}

void Descent::report() {
  if (!opt_.progress) return;
  auto now = Clock::now();
  if (std::chrono::duration<double>(now - last_report_).count() < 0.5) return;
  last_report_ = now;
  opt_.progress(a_.objective(), stats_.sweeps);
}

// Plain CD step: the best choice of coordinate k with everything else fixed.
bool Descent::improve(int k) {
  int n = 0, nt = 0;
  const int* ops = members(k, n);
  const int* tm = terms(k, nt);
  const int K = t_.choices(ops[0]);
  if (still_empty(&k, 1, improve_empty_at_[k], true)) return false;
  double best = -eps();
  int best_c = -1;
  if (uniform_ && n > 1) {  // a tied coordinate: once per class
    for (int c = 0; c < K; ++c) {
      if (a_.choice(ops[0]) == c) continue;
      const double d = delta_tied(k, ops, n, c);
      if (d < best) {
        best = d;
        best_c = c;
      }
    }
  }
  for (int c = 0; c < K && !(uniform_ && n > 1); ++c) {
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
  if (best_c < 0) {
    improve_empty_at_[k] = empty_at(true);
    return false;
  }
  for (int j = 0; j < n; ++j) cvec_[j] = best_c;
  apply(ops, cvec_.data(), n, tm, nt);
  ++stats_.moves;
  return true;
}

void Descent::sweeps() {
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

CdStats coordinate_descent(Assignment& a, const Coordinates& co, const CdOptions& opt) {
  Descent d(a, co, opt);
  return d.run();
}

}  // namespace autoddl::search
