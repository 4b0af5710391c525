// An assignment of one choice per op and its table objective, kept up to date incrementally:
// a move re-costs only the moved ops' nodes, the terms touching them, and the memory of their
// stages. objective = Σ node + Σ term + penalty, penalty = μ · Σ_stages max(0, memory − capacity).
#pragma once
#include <vector>

#include "autoddl/search/cost_tables.hpp"

namespace autoddl::search {

struct Objective {
  double time_s = 0;     // Σ node + Σ term
  double penalty_s = 0;  // memory over capacity, priced
  std::vector<double> memory_bytes;  // per stage
  double total() const { return time_s + penalty_s; }
};

// From scratch, with no shared state: what the incremental value must equal.
Objective recompute_objective(const CostTables& t, const std::vector<int>& choice);

class Assignment {
 public:
  Assignment(const CostTables& tables, std::vector<int> choice);

  const CostTables& tables() const { return *t_; }
  const std::vector<int>& choice() const { return choice_; }
  int choice(int op) const { return choice_[op]; }
  double objective() const { return time_ + penalty_s(); }
  double time_s() const { return time_; }
  double penalty_s() const;
  double memory_bytes(int stage) const { return mem_[stage]; }
  const std::vector<double>& memory() const { return mem_; }
  double term_value(int term) const { return term_val_[term]; }

  // Objective change if ops[0..n) (distinct) took choices c[0..n); `terms` lists (once each)
  // every term touching those ops. Leaves the assignment unchanged. Allocation-free.
  double delta(const int* ops, const int* c, int n, const int* terms, int n_terms);
  // Applies that change.
  void move(const int* ops, const int* c, int n, const int* terms, int n_terms);
  // The same change for ops[0..n) all taking choice c while they hold one choice, from one
  // representative per class: reps[i] stands for rep_mult[i] members of equal node cost and
  // memory, terms[i] for term_mult[i] terms of equal cost (Coordinates::rops / rterms). Every
  // member is written while the terms are priced, since a representative term may read any.
  double delta_tied(const int* ops, int n, int c, const int* reps, const int* rep_mult, int n_reps,
                    const int* terms, const int* term_mult, int n_terms);
  // One op (its own term list).
  double delta(int op, int c);
  void move(int op, int c);

  // Scratch access for joint searches: they write choices, read term costs, and restore.
  int* scratch_choice() { return choice_.data(); }
  // Memory change per stage of ops[0..n) taking c[0..n), added into `dmem` (size stages()).
  void memory_delta(const int* ops, const int* c, int n, double* dmem) const;
  // Penalty of the stages if their memory changed by dmem.
  double penalty_with(const double* dmem) const;

 private:
  const CostTables* t_;
  std::vector<int> choice_;
  std::vector<double> term_val_;
  std::vector<double> mem_;
  std::vector<double> dmem_;  // scratch, one per stage
  std::vector<int> old_;      // scratch, one per op
  double time_ = 0;
};

}  // namespace autoddl::search
