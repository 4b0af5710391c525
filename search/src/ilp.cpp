// The ILP of the table objective and its CBC solve (see ilp.hpp). Objective in microseconds and
// memory in GB so CBC's tolerances sit well above the numbers' noise. Term costs come from
// CostTables::term_cost evaluated at one representative choice per boxing state, so the ILP
// prices exactly what CD prices.
#include "autoddl/search/ilp.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <string>

#include <coin/CbcModel.hpp>
#include <coin/CbcSolver.hpp>
#include <coin/CoinPackedMatrix.hpp>
#include <coin/OsiClpSolverInterface.hpp>

#include "autoddl/search/assignment.hpp"

namespace autoddl::search {

namespace {

constexpr double kObjScale = 1e6;   // seconds -> microseconds
constexpr double kMemScale = 1e-9;  // bytes -> GB

struct Lp {
  std::vector<double> obj, lb, ub;
  std::vector<char> integer;
  std::vector<int> row_start{0}, row_col;
  std::vector<double> row_val, row_lo, row_hi;

  int col(double cost, bool is_int = false, double up = 1) {
    obj.push_back(cost);
    lb.push_back(0);
    ub.push_back(up);
    integer.push_back(is_int ? 1 : 0);
    return static_cast<int>(obj.size()) - 1;
  }
  void entry(int c, double v) {
    row_col.push_back(c);
    row_val.push_back(v);
  }
  void end_row(double lo, double hi) {
    row_start.push_back(static_cast<int>(row_col.size()));
    row_lo.push_back(lo);
    row_hi.push_back(hi);
  }
  int rows() const { return static_cast<int>(row_lo.size()); }
};

// The distinct keys of one side of a term over its op's choices, renumbered densely.
struct Side {
  int op = 0, coord = 0;
  std::vector<int> key_of;  // per choice: dense key
  std::vector<int> rep;     // per dense key: one choice with it
  std::vector<int> raw;     // per dense key: the raw key
};

Side make_side(const CostTables& t, const Coordinates& co, int op, int (*raw_key)(const OpClass&, int c, int port),
               int port) {
  Side s;
  s.op = op;
  s.coord = co.of_op[op];
  const OpClass& k = t.cls(op);
  std::map<int, int> dense;
  for (int c = 0; c < k.n_choices; ++c) {
    const int r = raw_key(k, c, port);
    auto [it, fresh] = dense.emplace(r, static_cast<int>(s.rep.size()));
    if (fresh) {
      s.rep.push_back(c);
      s.raw.push_back(r);
    }
    s.key_of.push_back(it->second);
  }
  return s;
}

int key_out(const OpClass& k, int c, int port) { return k.out_state[c * kMaxOpOutputs + port]; }
int key_out_grad(const OpClass& k, int c, int port) { return k.out_grad_state[c * kMaxOpOutputs + port]; }
int key_in(const OpClass& k, int c, int port) { return k.in_state[c * kMaxOpInputs + port]; }
int key_in_grad(const OpClass& k, int c, int port) { return k.in_grad_state[c * kMaxOpInputs + port]; }
int key_store(const OpClass& k, int c, int port) { return k.store_state[c * kMaxOpInputs + port] * 2 + k.zero[c]; }
int key_use(const OpClass& k, int c, int port) {
  return k.in_state[c * kMaxOpInputs + port] * 65536 + k.in_grad_state[c * kMaxOpInputs + port];
}

// Builds the ILP of the whole objective, or of a part of it (IlpPart): then only the charged
// coordinates pay their node cost and memory, only the listed terms are priced, and the other
// coordinates are free copies (a binary per choice with no cost of their own).
class Builder {
 public:
  Builder(const CostTables& t, const Coordinates& co) : t_(t), co_(co), rep_(t.ops(), 0) {}
  Builder(const CostTables& t, const Coordinates& co, const std::vector<int>& terms, std::vector<char> charged,
          double memory_price_s_per_byte)
      : t_(t), co_(co), rep_(t.ops(), 0), terms_(&terms), charged_(std::move(charged)),
        memory_price_(memory_price_s_per_byte) {}

  Lp build() {
    // One binary per (coordinate, choice).
    x_base_.resize(co_.size());
    for (int k = 0; k < co_.size(); ++k) {
      const int first = co_.ops[co_.op_begin[k]];
      x_base_[k] = static_cast<int>(lp_.obj.size());
      for (int c = 0; c < t_.choices(first); ++c) {
        double cost = 0;
        if (charged(k)) {
          for (int j = co_.op_begin[k]; j < co_.op_begin[k + 1]; ++j) cost += t_.node_s(co_.ops[j], c);
        }
        lp_.col(cost * kObjScale, true);
      }
      for (int c = 0; c < t_.choices(first); ++c) lp_.entry(x_base_[k] + c, 1);
      lp_.end_row(1, 1);
    }
    if (terms_) {
      for (int term : *terms_) add_term(term);
    } else {
      for (int term = 0; term < t_.terms(); ++term) add_term(term);
    }
    add_memory();
    return std::move(lp_);
  }

  const std::vector<int>& x_base() const { return x_base_; }

 private:
  int x(const Side& s, int c) const { return x_base_[s.coord] + c; }
  bool charged(int k) const { return charged_.empty() || charged_[k]; }

  // Σ_b e_ab = u_a and Σ_a e_ab = v_b; returns the first e column (row-major a × b).
  int transport(const Side& a, const Side& b, const std::vector<double>& cost) {
    const int na = static_cast<int>(a.rep.size()), nb = static_cast<int>(b.rep.size());
    const int e0 = static_cast<int>(lp_.obj.size());
    for (int i = 0; i < na * nb; ++i) lp_.col(cost.empty() ? 0 : cost[i]);
    for (int ia = 0; ia < na; ++ia) {
      for (int ib = 0; ib < nb; ++ib) lp_.entry(e0 + ia * nb + ib, 1);
      for (int c = 0; c < static_cast<int>(a.key_of.size()); ++c) {
        if (a.key_of[c] == ia) lp_.entry(x(a, c), -1);
      }
      lp_.end_row(0, 0);
    }
    for (int ib = 0; ib < nb; ++ib) {
      for (int ia = 0; ia < na; ++ia) lp_.entry(e0 + ia * nb + ib, 1);
      for (int c = 0; c < static_cast<int>(b.key_of.size()); ++c) {
        if (b.key_of[c] == ib) lp_.entry(x(b, c), -1);
      }
      lp_.end_row(0, 0);
    }
    return e0;
  }

  void linear_or_transport(const Side& a, const Side& b, const std::vector<double>& cost) {
    const int na = static_cast<int>(a.rep.size()), nb = static_cast<int>(b.rep.size());
    bool any = false;
    for (double v : cost) any |= v != 0;
    if (!any) return;
    if (a.coord == b.coord) {  // tied together: both sides follow the same binary
      for (int c = 0; c < static_cast<int>(a.key_of.size()); ++c) {
        lp_.obj[x(a, c)] += cost[a.key_of[c] * nb + b.key_of[c]];
      }
      return;
    }
    if (na == 1 || nb == 1) {  // one side fixed: the cost is linear in the other side
      const Side& v = na == 1 ? b : a;
      for (int c = 0; c < static_cast<int>(v.key_of.size()); ++c) {
        lp_.obj[x(v, c)] += na == 1 ? cost[v.key_of[c]] : cost[v.key_of[c] * nb];
      }
      return;
    }
    transport(a, b, cost);
  }

  void add_term(int term) {
    const Term& tm = t_.term(term);
    const int* ops = t_.term_members(term);
    const int8_t* ports = t_.term_ports(term);
    if (tm.kind == TermKind::backward && tm.count > 2) {
      add_multi_backward(term);
      return;
    }
    if (tm.kind == TermKind::forward && tm.count > 2) {
      add_multi_forward(term);
      return;
    }
    Side a, b;
    switch (tm.kind) {
      case TermKind::forward:
        a = make_side(t_, co_, ops[0], key_out, ports[0]);
        b = make_side(t_, co_, ops[1], key_in, ports[1]);
        break;
      case TermKind::backward:
        a = make_side(t_, co_, ops[0], key_out_grad, ports[0]);
        b = make_side(t_, co_, ops[1], key_in_grad, ports[1]);
        break;
      case TermKind::tied:
        a = make_side(t_, co_, ops[0], key_store, ports[0]);
        b = make_side(t_, co_, ops[1], key_use, ports[1]);
        break;
    }
    const int na = static_cast<int>(a.rep.size()), nb = static_cast<int>(b.rep.size());
    std::vector<double> cost(static_cast<size_t>(na) * nb);
    for (int ia = 0; ia < na; ++ia) {
      for (int ib = 0; ib < nb; ++ib) {
        rep_[a.op] = a.rep[ia];
        rep_[b.op] = b.rep[ib];
        cost[ia * nb + ib] = t_.term_cost(term, rep_.data()) * kObjScale;
      }
    }
    linear_or_transport(a, b, cost);
  }

  // Several readers in one stage: the send is linear in the producer's choice; boxing as for
  // backward: e^j per reader (no cost), h_ab ≥ e^j_ab charged once per state pair.
  void add_multi_forward(int term) {
    const Term& tm = t_.term(term);
    const int* ops = t_.term_members(term);
    const int8_t* ports = t_.term_ports(term);
    const Side a = make_side(t_, co_, ops[0], key_out, ports[0]);
    const int na = static_cast<int>(a.rep.size());
    for (int c = 0; c < static_cast<int>(a.key_of.size()); ++c) {
      lp_.obj[x(a, c)] += t_.forward_send_s(tm, a.raw[a.key_of[c]]) * kObjScale;
    }
    const costmodel::BoxingTable& tb = *tm.info->table;
    std::map<std::pair<int, int>, int> h;  // (out raw, in raw) -> column
    for (int j = 1; j < tm.count; ++j) {
      const Side b = make_side(t_, co_, ops[j], key_in, ports[j]);
      const int nb = static_cast<int>(b.rep.size());
      const int e0 = transport(a, b, {});
      for (int ia = 0; ia < na; ++ia) {
        for (int ib = 0; ib < nb; ++ib) {
          const int out = a.raw[ia], in = b.raw[ib];
          const double c = tb.time_s(out, in) * tm.scale * kObjScale;
          if (c == 0) continue;
          auto it = h.find({out, in});
          if (it == h.end()) it = h.emplace(std::make_pair(out, in), lp_.col(c)).first;
          lp_.entry(it->second, 1);
          lp_.entry(e0 + ia * nb + ib, -1);
          lp_.end_row(0, 1e30);
        }
      }
    }
  }

  // Several consumers: e^j per consumer (no cost), h_ab ≥ e^j_ab charged once per state pair.
  void add_multi_backward(int term) {
    const Term& tm = t_.term(term);
    const int* ops = t_.term_members(term);
    const int8_t* ports = t_.term_ports(term);
    const Side a = make_side(t_, co_, ops[0], key_out_grad, ports[0]);
    const int na = static_cast<int>(a.rep.size());
    std::map<std::pair<int, int>, int> h;  // (og raw, g raw) -> column
    for (int j = 1; j < tm.count; ++j) {
      const Side b = make_side(t_, co_, ops[j], key_in_grad, ports[j]);
      const int nb = static_cast<int>(b.rep.size());
      const int e0 = transport(a, b, {});
      for (int ia = 0; ia < na; ++ia) {
        for (int ib = 0; ib < nb; ++ib) {
          const int og = a.raw[ia], g = b.raw[ib];
          const double c = t_.backward_pair_s(tm, g, og) * kObjScale;
          if (c == 0) continue;
          auto it = h.find({og, g});
          if (it == h.end()) it = h.emplace(std::make_pair(og, g), lp_.col(c)).first;
          lp_.entry(it->second, 1);
          lp_.entry(e0 + ia * nb + ib, -1);
          lp_.end_row(0, 1e30);
        }
      }
    }
  }

  // Per stage: Σ memory · x ≤ capacity, or with a memory price, price · memory in the objective
  // (the Lagrangian relaxation of that row; its constant −price · capacity is the caller's).
  void add_memory() {
    for (int s = 0; s < t_.stages(); ++s) {
      std::map<int, double> coef;
      for (int k = 0; k < co_.size(); ++k) {
        if (!charged(k)) continue;
        for (int j = co_.op_begin[k]; j < co_.op_begin[k + 1]; ++j) {
          const int op = co_.ops[j];
          for (int c = 0; c < t_.choices(op); ++c) {
            double m = t_.stage(op) == s ? t_.memory_bytes(op, c) : 0;
            for (int mi : t_.op_mem_terms(op)) {
              const MemTerm& mt = t_.mem_terms()[mi];
              if (mt.stage == s) m += t_.extra_mem_bytes(mt, c);
            }
            if (m != 0) coef[x_base_[k] + c] += m * kMemScale;
          }
        }
      }
      if (memory_price_ >= 0) {
        for (const auto& [col, v] : coef) lp_.obj[col] += memory_price_ * (v / kMemScale) * kObjScale;
        continue;
      }
      for (const auto& [col, v] : coef) lp_.entry(col, v);
      lp_.end_row(-1e30, t_.capacity_bytes(s) * kMemScale);
    }
  }

  const CostTables& t_;
  const Coordinates& co_;
  std::vector<int> rep_;
  std::vector<int> x_base_;
  const std::vector<int>* terms_ = nullptr;
  std::vector<char> charged_;
  double memory_price_ = -1;
  Lp lp_;
};

// CBC on a built problem: per coordinate the chosen choice (empty when no solution), CBC's
// objective and best bound in seconds. The time limit counts from t0 (building included).
struct Cbc {
  bool optimal = false, infeasible = false;
  std::vector<int> coord_choice;
  double objective_s = 0, bound_s = 0;
  int columns = 0, rows = 0, binaries = 0;
};

Cbc run_cbc(const CostTables& t, const Coordinates& co, const std::vector<int>& x_base, Lp lp,
            const std::vector<int>* warm_start, double time_limit_s, std::chrono::steady_clock::time_point t0) {
  Cbc r;
  const int n = static_cast<int>(lp.obj.size());
  r.columns = n;
  r.rows = lp.rows();
  std::vector<int> lengths(lp.rows());
  for (int i = 0; i < lp.rows(); ++i) lengths[i] = lp.row_start[i + 1] - lp.row_start[i];
  CoinPackedMatrix matrix(false, n, lp.rows(), static_cast<CoinBigIndex>(lp.row_col.size()), lp.row_val.data(),
                          lp.row_col.data(), lp.row_start.data(), lengths.data());
  OsiClpSolverInterface solver;
  solver.loadProblem(matrix, lp.lb.data(), lp.ub.data(), lp.obj.data(), lp.row_lo.data(), lp.row_hi.data());
  for (int c = 0; c < n; ++c) {
    if (lp.integer[c]) {
      solver.setInteger(c);
      ++r.binaries;
    }
  }
  solver.messageHandler()->setLogLevel(0);
  CbcModel model(solver);
  model.messageHandler()->setLogLevel(0);
  if (warm_start) {
    std::vector<std::pair<std::string, double>> start;
    for (int k = 0; k < co.size(); ++k) {
      const int first = co.ops[co.op_begin[k]];
      for (int c = 0; c < t.choices(first); ++c) {
        const int col = x_base[k] + c;
        std::string name = "x" + std::to_string(col);
        model.solver()->setColName(col, name);
        start.emplace_back(name, (*warm_start)[first] == c ? 1.0 : 0.0);
      }
    }
    model.setMIPStart(start);
  }
  CbcSolverUsefulData data;
  data.noPrinting_ = true;
  CbcMain0(model, data);
  const double built_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string sec = std::to_string(std::max(1.0, time_limit_s - built_s));
  const char* argv[] = {"autoddl", "-log", "0", "-timeMode", "elapsed", "-sec", sec.c_str(), "-solve", "-quit"};
  CbcMain1(9, argv, model, [](CbcModel*, int) { return 0; }, data);

  r.optimal = model.isProvenOptimal();
  r.infeasible = model.isProvenInfeasible();
  if (const double* sol = model.bestSolution()) {
    r.coord_choice.resize(co.size());
    for (int k = 0; k < co.size(); ++k) {
      const int first = co.ops[co.op_begin[k]];
      int best = 0;
      for (int c = 1; c < t.choices(first); ++c) {
        if (sol[x_base[k] + c] > sol[x_base[k] + best]) best = c;
      }
      r.coord_choice[k] = best;
    }
    r.objective_s = model.getObjValue() / kObjScale;
  }
  r.bound_s = model.getBestPossibleObjValue() / kObjScale;
  if (r.optimal && !r.coord_choice.empty()) r.bound_s = std::min(r.bound_s, r.objective_s);
  return r;
}

}  // namespace

IlpResult solve_ilp(const CostTables& t, const Coordinates& co, const IlpOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  IlpResult r;
  Builder b(t, co);
  Cbc cbc = run_cbc(t, co, b.x_base(), b.build(), opt.warm_start, opt.time_limit_s, t0);
  r.columns = cbc.columns;
  r.rows = cbc.rows;
  r.binaries = cbc.binaries;
  r.optimal = cbc.optimal;
  r.infeasible = cbc.infeasible;
  if (!cbc.coord_choice.empty()) {
    r.has_solution = true;
    r.choice.assign(t.ops(), 0);
    for (int k = 0; k < co.size(); ++k) {
      for (int j = co.op_begin[k]; j < co.op_begin[k + 1]; ++j) r.choice[co.ops[j]] = cbc.coord_choice[k];
    }
    r.objective_s = recompute_objective(t, r.choice).total();
  }
  r.bound_s = cbc.bound_s;
  if (r.optimal && r.has_solution) r.bound_s = std::min(r.bound_s, r.objective_s);
  if (r.has_solution && r.objective_s > 0) r.gap = std::max(0.0, (r.objective_s - r.bound_s) / r.objective_s);
  r.status = r.optimal ? "optimal" : r.infeasible ? "infeasible" : r.has_solution ? "time limit (best bound reported)" : "no solution";
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

IlpPartResult solve_ilp_part(const CostTables& t, const IlpPart& part, double time_limit_s) {
  const auto t0 = std::chrono::steady_clock::now();
  // One coordinate per op the part touches: its charged ops, then the free copies.
  Coordinates co;
  co.of_op.assign(t.ops(), -1);
  co.op_begin.push_back(0);
  std::vector<char> charged;
  auto add = [&](int op, bool pay) {
    if (co.of_op[op] >= 0) return;
    co.of_op[op] = co.size();
    co.ops.push_back(op);
    co.op_begin.push_back(static_cast<int>(co.ops.size()));
    charged.push_back(pay ? 1 : 0);
  };
  for (int op : part.ops) add(op, true);
  for (int term : part.terms) {
    const int* m = t.term_members(term);
    for (int y = 0; y < t.term(term).count; ++y) add(m[y], false);
  }
  Builder b(t, co, part.terms, std::move(charged), part.memory_price_s_per_byte);
  Lp lp = b.build();
  for (const auto& [op, price] : part.op_price_s) {
    if (co.of_op[op] < 0) continue;
    for (size_t c = 0; c < price.size(); ++c) lp.obj[b.x_base()[co.of_op[op]] + c] += price[c] * kObjScale;
  }
  Cbc cbc = run_cbc(t, co, b.x_base(), std::move(lp), nullptr, time_limit_s, t0);
  IlpPartResult r;
  r.optimal = cbc.optimal;
  r.bound_s = cbc.bound_s;
  r.objective_s = cbc.objective_s;
  r.columns = cbc.columns;
  if (!cbc.coord_choice.empty()) {
    for (int op : part.ops) r.choice.push_back(cbc.coord_choice[co.of_op[op]]);
    for (const auto& pr : part.op_price_s) {
      r.priced_choice.push_back(co.of_op[pr.first] >= 0 ? cbc.coord_choice[co.of_op[pr.first]] : -1);
    }
  }
  return r;
}

}  // namespace autoddl::search
