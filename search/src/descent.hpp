// The coordinate-descent engine behind coordinate_descent() (private to search/src): one object
// per call holds the assignment, the coordinates and every work buffer, sized once so the sweeps
// (descent.cpp), the neighbourhood branch and bound (descent_neighbourhood.cpp) and the chain
// windows (descent_windows.cpp) allocate nothing.
#pragma once
#include <chrono>
#include <cmath>
#include <memory>
#include <vector>

#include "autoddl/search/coordinate_descent.hpp"
#include "check_memo.hpp"

namespace autoddl::search {

class Descent {
 public:
  Descent(Assignment& a, const Coordinates& co, const CdOptions& opt);
  CdStats run();

 private:
  using Clock = std::chrono::steady_clock;
  static constexpr int kMaxNbh = 4;      // coordinates in one neighbourhood
  static constexpr int kMaxWindow = 16;  // coordinates in one chain window
  static constexpr int kMaxRegion = 24;  // coordinates in one region move (an attention block: 17)

  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  bool out_of_time() {
    if (elapsed() > opt_.time_limit_s) stats_.time_limit_hit = true;
    return stats_.time_limit_hit;
  }
  double eps() const { return 1e-12 * (std::fabs(a_.objective()) + 1e-9); }
  void report();
  const int* members(int k, int& n) const {
    n = co_.op_begin[k + 1] - co_.op_begin[k];
    return &co_.ops[co_.op_begin[k]];
  }
  const int* terms(int k, int& n) const {
    n = co_.term_begin[k + 1] - co_.term_begin[k];
    return &co_.terms[co_.term_begin[k]];
  }

  // Checks that found nothing are not repeated while nothing they read has changed
  // (descent.cpp): every move stamps its coordinates with a serial, and a check is skipped when
  // no coordinate it reads (its members and their neighbours) moved since it last came back
  // empty. A check that weighs memory is also skipped only while every stage stays within
  // capacity and no stage's memory went down since: a stage whose memory only rose (still
  // under capacity) penalizes every candidate at least as much as before, since the penalty is
  // convex (a candidate that lowers memory gains nothing under capacity). Exact: the skipped
  // check would have come back empty again.
  void apply(const int* ops, const int* c, int n, const int* terms, int n_terms);
  bool still_empty(const int* coords, int n, long at, bool weighs_memory);
  long empty_at(bool weighs_memory) const { return weighs_memory && a_.penalty_s() > 0 ? -1 : serial_; }

  // Checks answered by an identical one since the last move (CdOptions::memo_checks): the key
  // is the check's members (op kind, choice) and its terms (term kind; per member its position
  // in the check, or -1, and its choice), built in key_ after the check has gathered uterms_.
  bool memo_on();
  void check_key(int tag, const int* coords, int n);
  // The last check_key's key: kMemoTime if memo_time_ holds it (looked at only when time_ok),
  // kMemoMem if memo_mem_ does, else 0; memo_store files it in memo_time_ or memo_mem_.
  static constexpr int kMemoTime = 1, kMemoMem = 2;
  int memo_lookup(bool time_ok) const;
  void memo_store(bool time_only);

  // A term's cost for each choice of coordinate k (every member of k at that choice, the rest at
  // their current choices): kept per (term, k's first member in it) and recomputed only when a
  // member outside k has moved since (changed_at_); the unary costs of joint and window checks.
  const double* term_row(int term, int k, int K);

  // Plain mode (descent.cpp).
  bool improve(int k);
  double delta_tied(int k, const int* ops, int n, int c);
  void sweeps();

  // Neighbourhood mode (descent_neighbourhood.cpp).
  void push(int k);
  bool neighbourhoods();
  void pick(int u);
  void set_members(int j, int c);
  bool joint(int u);
  bool joint_search(int k);
  void restore(int n_ops);
  void dfs(int j, double acc, int k, int n_ops);
  double penalty_of_picks(int k, int n_ops);

  // Region moves (descent_regions.cpp): per mesh dim d and op class, each choice's replica over
  // d (the same signature on every other dim, every port broadcast on d; -1: none or already).
  void build_replicas();
  int replica_of(int k, int d) const;  // of coordinate k's current choice (-1 if none)
  bool regions();
  bool region_move(int u, int d);

  // Chain windows (descent_windows.cpp).
  int grow_window(int u);
  bool windows();
  bool window_dp(int n);
  int group_candidates(int j, const std::vector<int>& terms, std::vector<int>& group);

  Assignment& a_;
  const CostTables& t_;
  const Coordinates& co_;
  const CdOptions& opt_;
  Clock::time_point start_, last_report_;
  CdStats stats_;
  // Every coordinate's members hold one choice (true at a tied seed; moves keep it): plain
  // steps then price a tied coordinate once per class (Coordinates::rops / rterms).
  bool uniform_ = false;
  // Shared scratch: ops of a joint move and their saved (then new) choices; positions of
  // coordinates in the current neighbourhood or window (-1 = outside); term stamps.
  std::vector<int> cvec_, jops_, pos_, term_stamp_;
  std::vector<uint8_t> term_mask_;
  std::vector<int> uterms_;
  std::vector<double> dmem_;
  int stamp_ = 0;
  // Neighbourhood branch and bound.
  std::vector<int> unary_terms_[kMaxNbh], multi_terms_[kMaxNbh];
  // Per multi term of a member: the earlier members it also touches (n of them, -1: no table)
  // with their strides, and the offset of its table of costs in pair_val_ (joint_search).
  static constexpr long kMaxTermTable = 1L << 16;
  struct PairTable {
    int n;
    int lo[kMaxNbh - 1];
    long stride[kMaxNbh - 1];
    long offset;
  };
  std::vector<PairTable> multi_pair_[kMaxNbh];
  std::vector<double> pair_val_;
  std::vector<long> pair_at_;
  long pair_stamp_ = 0;
  std::vector<double> unary_[kMaxNbh];
  std::vector<int> order_[kMaxNbh];
  int n_cand_[kMaxNbh] = {};
  double suffix_min_[kMaxNbh + 1] = {};
  int pick_[kMaxNbh] = {}, best_pick_[kMaxNbh] = {};
  int nbh_[kMaxNbh] = {}, nbh_n_ = 0;
  double best_ = 0;
  bool found_ = false;
  long nodes_ = 0;
  std::vector<uint8_t> in_queue_;
  std::vector<int> queue_;
  int q_head_ = 0, q_tail_ = 0;
  // Chain windows.
  int win_[kMaxWindow] = {};
  int wn_[kMaxWindow] = {}, best_win_[kMaxWindow] = {};
  std::vector<int> wunary_[kMaxWindow], wpair_[kMaxWindow];
  std::vector<double> wu_[kMaxWindow], wf_[kMaxWindow];
  std::vector<int> wcand_[kMaxWindow], warg_[kMaxWindow];
  std::vector<int> wnew_, wsorted_;
  // Candidates grouped by what the pair terms read of them (group_candidates): keys, order, ids,
  // and per group of the later window its DP result; per group of the earlier one a visit stamp.
  std::vector<uint64_t> wkey_;
  std::vector<int> widx_, wgroup_[2], wgarg_;
  std::vector<double> wgbest_;
  std::vector<long> wgseen_;
  long wgserial_ = 0;
  bool win_same_ = false;  // the last window_dp's optimum was the current choice
  // Region moves.
  std::vector<std::vector<int>> replica_;  // [d · classes + class][choice]
  int region_[kMaxRegion] = {};
  int region_terms_[kMaxRegion] = {};      // uterms_ of the region's prefix ending at each member
  std::vector<long> region_seen_;          // growth stamps per coordinate
  long region_pass_ = 0;
  std::vector<long> region_empty_at_;      // per (d, root coordinate), as the other *_empty_at_
  // Skipping repeated empty checks (apply / still_empty).
  long serial_ = 0, mem_down_at_ = -1;
  std::vector<long> changed_at_, improve_empty_at_, joint_empty_at_, window_empty_at_;
  std::vector<double> mem_before_;
  // Memos of empty joint and window checks (memo_on / check_key). memo_time_: outcomes that
  // hold whatever the memory: a joint check where no candidate beat the incumbent on time alone
  // with no stage over capacity (valid again whenever none is: a candidate's penalty is >= 0), a
  // window whose DP (time only) kept the current choices. memo_mem_: empty only once memory
  // was weighed.
  // term_row's rows: K doubles per term member slot (CostTables::term_members), with the serial
  // at which each was priced (-1: never).
  std::unique_ptr<double[]> row_;
  std::vector<long> row_at_;
  std::vector<int> cvec_row_;  // term_row's saved choices of k's members
  int row_stride_ = 0;
  static constexpr size_t kMemoMaxEntries = size_t{1} << 16;
  CheckMemo memo_time_, memo_mem_;
  bool time_better_ = false;  // joint_search: some leaf beat the incumbent before its penalty
  long memo_serial_ = -1;
  bool memo_strict_ = false;  // the memo holds outcomes priced with a stage over capacity
  std::vector<int64_t> key_;
  uint64_t key_hash_ = 0;
};

}  // namespace autoddl::search
