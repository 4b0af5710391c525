// Incremental table objective (see assignment.hpp). Every change goes through delta()/move()
// over an explicit term list, so a move costs O(its terms), never O(graph).
#include "autoddl/search/assignment.hpp"

#include <algorithm>

#include "autoddl/costmodel/error.hpp"

namespace autoddl::search {

namespace {

double stage_penalty(const CostTables& t, int s, double mem) {
  return t.penalty_s_per_byte() * std::max(0.0, mem - t.capacity_bytes(s));
}

void add_memory(const CostTables& t, int op, int c, double sign, double* mem) {
  mem[t.stage(op)] += sign * t.memory_bytes(op, c);
  for (int mi : t.op_mem_terms(op)) {
    const MemTerm& m = t.mem_terms()[mi];
    mem[m.stage] += sign * t.extra_mem_bytes(m, c);
  }
}

}  // namespace

Objective recompute_objective(const CostTables& t, const std::vector<int>& choice) {
  AUTODDL_CHECK(static_cast<int>(choice.size()) == t.ops()) << "one choice per op";
  Objective o;
  o.memory_bytes.assign(t.stages(), 0);
  for (int i = 0; i < t.ops(); ++i) {
    AUTODDL_CHECK(choice[i] >= 0 && choice[i] < t.choices(i)) << "choice out of range";
    o.time_s += t.node_s(i, choice[i]);
    add_memory(t, i, choice[i], 1, o.memory_bytes.data());
  }
  for (int k = 0; k < t.terms(); ++k) o.time_s += t.term_cost(k, choice.data());
  for (int s = 0; s < t.stages(); ++s) o.penalty_s += stage_penalty(t, s, o.memory_bytes[s]);
  return o;
}

Assignment::Assignment(const CostTables& tables, std::vector<int> choice)
    : t_(&tables), choice_(std::move(choice)) {
  Objective o = recompute_objective(tables, choice_);
  time_ = o.time_s;
  mem_ = o.memory_bytes;
  dmem_.assign(mem_.size(), 0);
  old_.assign(choice_.size(), 0);
  term_val_.resize(tables.terms());
  for (int k = 0; k < tables.terms(); ++k) term_val_[k] = tables.term_cost(k, choice_.data());
}

double Assignment::penalty_s() const {
  double p = 0;
  for (int s = 0; s < t_->stages(); ++s) p += stage_penalty(*t_, s, mem_[s]);
  return p;
}

void Assignment::memory_delta(const int* ops, const int* c, int n, double* dmem) const {
  for (int j = 0; j < n; ++j) {
    add_memory(*t_, ops[j], choice_[ops[j]], -1, dmem);
    add_memory(*t_, ops[j], c[j], 1, dmem);
  }
}

double Assignment::penalty_with(const double* dmem) const {
  double p = 0;
  for (int s = 0; s < t_->stages(); ++s) p += stage_penalty(*t_, s, mem_[s] + dmem[s]);
  return p;
}

double Assignment::delta(const int* ops, const int* c, int n, const int* terms, int n_terms) {
  double d = 0;
  std::fill(dmem_.begin(), dmem_.end(), 0.0);
  memory_delta(ops, c, n, dmem_.data());
  d += penalty_with(dmem_.data()) - penalty_s();
  for (int j = 0; j < n; ++j) d -= t_->node_s(ops[j], choice_[ops[j]]);
  for (int k = 0; k < n_terms; ++k) d -= term_val_[terms[k]];
  // Write the new choices, price the terms, restore (old_ is scratch sized to the ops).
  for (int j = 0; j < n; ++j) {
    old_[j] = choice_[ops[j]];
    choice_[ops[j]] = c[j];
  }
  for (int j = 0; j < n; ++j) d += t_->node_s(ops[j], c[j]);
  for (int k = 0; k < n_terms; ++k) d += t_->term_cost(terms[k], choice_.data());
  for (int j = n - 1; j >= 0; --j) choice_[ops[j]] = old_[j];
  return d;
}

void Assignment::move(const int* ops, const int* c, int n, const int* terms, int n_terms) {
  std::fill(dmem_.begin(), dmem_.end(), 0.0);
  memory_delta(ops, c, n, dmem_.data());
  for (int s = 0; s < t_->stages(); ++s) mem_[s] += dmem_[s];
  for (int j = 0; j < n; ++j) time_ -= t_->node_s(ops[j], choice_[ops[j]]);
  for (int j = 0; j < n; ++j) {
    choice_[ops[j]] = c[j];
  }
  for (int j = 0; j < n; ++j) time_ += t_->node_s(ops[j], c[j]);
  for (int k = 0; k < n_terms; ++k) {
    const double v = t_->term_cost(terms[k], choice_.data());
    time_ += v - term_val_[terms[k]];
    term_val_[terms[k]] = v;
  }
}

double Assignment::delta_tied(const int* ops, int n, int c, const int* reps, const int* rep_mult, int n_reps,
                              const int* terms, const int* term_mult, int n_terms) {
  std::fill(dmem_.begin(), dmem_.end(), 0.0);
  for (int j = 0; j < n_reps; ++j) {
    add_memory(*t_, reps[j], choice_[reps[j]], -rep_mult[j], dmem_.data());
    add_memory(*t_, reps[j], c, rep_mult[j], dmem_.data());
  }
  double d = penalty_with(dmem_.data()) - penalty_s();
  for (int j = 0; j < n_reps; ++j) d += rep_mult[j] * (t_->node_s(reps[j], c) - t_->node_s(reps[j], choice_[reps[j]]));
  for (int k = 0; k < n_terms; ++k) d -= term_mult[k] * term_val_[terms[k]];
  const int old = choice_[ops[0]];
  for (int j = 0; j < n; ++j) choice_[ops[j]] = c;
  for (int k = 0; k < n_terms; ++k) d += term_mult[k] * t_->term_cost(terms[k], choice_.data());
  for (int j = 0; j < n; ++j) choice_[ops[j]] = old;
  return d;
}

double Assignment::delta(int op, int c) {
  int n = 0;
  const int* terms = t_->op_terms(op, n);
  return delta(&op, &c, 1, terms, n);
}

void Assignment::move(int op, int c) {
  int n = 0;
  const int* terms = t_->op_terms(op, n);
  move(&op, &c, 1, terms, n);
}

}  // namespace autoddl::search
