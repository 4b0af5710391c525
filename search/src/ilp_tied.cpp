// The tied-layer certificate (see ilp_tied.hpp): parts, their signatures, one ILP per class
// under a Lagrange price on memory, and the replicated assignment.
#include "autoddl/search/ilp_tied.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>

#include "autoddl/search/assignment.hpp"
#include "autoddl/search/ilp.hpp"

namespace autoddl::search {

namespace {

struct Part {
  std::vector<int> ops, terms;
};

// Part 0: ops outside every block; then one part per Op::block in order of first appearance.
// Each term goes to the part of its last member in topological (op index) order.
std::vector<Part> make_parts(const CostTables& t) {
  std::vector<Part> parts(1);
  std::vector<int> part_of(t.ops());
  std::map<std::string, int> block_part;
  for (int op = 0; op < t.ops(); ++op) {
    const std::string& b = t.graph().ops[op].block;
    int p = 0;
    if (!b.empty()) {
      auto [it, fresh] = block_part.emplace(b, static_cast<int>(parts.size()));
      if (fresh) parts.emplace_back();
      p = it->second;
    }
    part_of[op] = p;
    parts[p].ops.push_back(op);
  }
  for (int term = 0; term < t.terms(); ++term) {
    const int* m = t.term_members(term);
    parts[part_of[*std::max_element(m, m + t.term(term).count)]].terms.push_back(term);
  }
  return parts;
}

// Everything a part's ILP depends on, with its ops and copies numbered locally: two parts with
// equal signatures have the same ILP (up to renaming), so the same optimum.
std::vector<double> signature(const CostTables& t, const Part& p) {
  std::vector<double> key;
  std::map<int, int> local;
  for (int op : p.ops) {
    local.emplace(op, static_cast<int>(local.size()));
    key.insert(key.end(), {static_cast<double>(t.class_of(op)), static_cast<double>(t.stage(op))});
    for (int c = 0; c < t.choices(op); ++c) key.insert(key.end(), {t.node_s(op, c), t.memory_bytes(op, c)});
    for (int mi : t.op_mem_terms(op)) {
      const MemTerm& mt = t.mem_terms()[mi];
      key.push_back(mt.stage);
      for (int c = 0; c < t.choices(op); ++c) key.push_back(t.extra_mem_bytes(mt, c));
    }
  }
  key.push_back(-1);
  std::vector<int> low(t.ops(), 0), high(t.ops(), 0);
  for (int term : p.terms) {
    const Term& tm = t.term(term);
    const int* m = t.term_members(term);
    const int8_t* ports = t.term_ports(term);
    key.insert(key.end(), {static_cast<double>(tm.kind), static_cast<double>(tm.count), tm.scale,
                           static_cast<double>(tm.cross_stage), tm.sync_weight,
                           static_cast<double>(reinterpret_cast<std::uintptr_t>(tm.info))});
    for (int y = 0; y < tm.count; ++y) {
      auto [it, fresh] = local.emplace(m[y], static_cast<int>(local.size()));
      key.insert(key.end(), {static_cast<double>(it->second), static_cast<double>(ports[y]),
                             static_cast<double>(t.class_of(m[y])), static_cast<double>(t.stage(m[y]))});
      high[m[y]] = t.choices(m[y]) - 1;
    }
    // Two probes of the cost function itself (all members at their first / last choice).
    key.push_back(t.term_cost(term, low.data()));
    key.push_back(t.term_cost(term, high.data()));
    for (int y = 0; y < tm.count; ++y) high[m[y]] = 0;
  }
  return key;
}

struct Class {
  int rep = 0;
  std::vector<int> members;  // parts
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Consistency multipliers: a copy of op o in one part and o itself in its own part must choose
// alike. With price μ per choice added to the copy and subtracted from o, the prices cancel in
// any consistent assignment, so every μ keeps the bound valid. μ is shared by all ops at one
// position of their part with one op class (so identical layers keep identical ILPs); a key
// is used only when every op with it is copied exactly once (else the prices would not cancel).
struct Duals {
  std::vector<int> key_of;                       // per op: key, or -1
  std::vector<std::vector<double>> mu;           // per key: price per choice
  std::vector<std::vector<int>> copies, own;     // per part: its copies / own ops with a key
};

Duals make_duals(const CostTables& t, const std::vector<Part>& parts) {
  Duals d;
  const int n = t.ops();
  std::vector<int> copied(n, 0), pos(n, 0), part_of(n, 0);
  d.copies.resize(parts.size());
  d.own.resize(parts.size());
  for (size_t p = 0; p < parts.size(); ++p) {
    for (size_t i = 0; i < parts[p].ops.size(); ++i) {
      pos[parts[p].ops[i]] = static_cast<int>(i);
      part_of[parts[p].ops[i]] = static_cast<int>(p);
    }
  }
  for (size_t p = 0; p < parts.size(); ++p) {
    std::vector<char> seen(n, 0);
    for (int op : parts[p].ops) seen[op] = 1;
    for (int term : parts[p].terms) {
      const int* m = t.term_members(term);
      for (int y = 0; y < t.term(term).count; ++y) {
        if (seen[m[y]]) continue;
        seen[m[y]] = 1;
        d.copies[p].push_back(m[y]);
        ++copied[m[y]];
      }
    }
  }
  std::map<std::pair<int, int>, int> key;  // (position, op class) -> key
  std::vector<char> usable;
  d.key_of.assign(n, -1);
  for (int op = 0; op < n; ++op) {
    auto [it, fresh] = key.emplace(std::make_pair(pos[op], t.class_of(op)), static_cast<int>(usable.size()));
    if (fresh) usable.push_back(1);
    usable[it->second] &= copied[op] == 1;
    d.key_of[op] = it->second;
  }
  // Keys renumbered over the usable ones, only for ops that someone copies.
  std::vector<int> dense(usable.size(), -1);
  for (int op = 0; op < n; ++op) {
    int& k = d.key_of[op];
    if (!usable[k]) {
      k = -1;
      continue;
    }
    if (dense[k] < 0) {
      dense[k] = static_cast<int>(d.mu.size());
      d.mu.emplace_back(t.choices(op), 0.0);
    }
    k = dense[k];
  }
  for (size_t p = 0; p < parts.size(); ++p) {
    auto& c = d.copies[p];
    c.erase(std::remove_if(c.begin(), c.end(), [&](int op) { return d.key_of[op] < 0; }), c.end());
    for (int op : parts[p].ops) {
      if (d.key_of[op] >= 0) d.own[p].push_back(op);
    }
  }
  return d;
}

}  // namespace

TiedBound tied_layer_bound(const CostTables& t, const TiedBoundOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  TiedBound r;
  bool have_choice = false;
  auto offer = [&](std::vector<int> choice) {
    const Objective o = recompute_objective(t, choice);
    const bool fits = o.penalty_s == 0;
    if (!have_choice || (fits && !r.fits) || (fits == r.fits && o.total() < r.objective_s)) {
      r.choice = std::move(choice);
      r.objective_s = o.total();
      r.fits = fits;
      have_choice = true;
    }
    return o;
  };
  const std::vector<Part> parts = make_parts(t);
  Duals duals = make_duals(t, parts);
  std::vector<Class> classes;
  {
    std::map<std::vector<double>, int> by_key;
    for (int p = 0; p < static_cast<int>(parts.size()); ++p) {
      if (parts[p].ops.empty() && parts[p].terms.empty()) continue;
      std::vector<double> key = signature(t, parts[p]);
      for (int op : duals.copies[p]) key.insert(key.end(), {-2.0, static_cast<double>(duals.key_of[op])});
      for (int op : duals.own[p]) key.insert(key.end(), {-3.0, static_cast<double>(duals.key_of[op])});
      auto [it, fresh] = by_key.emplace(std::move(key), static_cast<int>(classes.size()));
      if (fresh) classes.push_back({p, {}});
      classes[it->second].members.push_back(p);
    }
  }
  r.parts = static_cast<int>(parts.size());
  r.classes = static_cast<int>(classes.size());
  double capacity = 0;
  for (int s = 0; s < t.stages(); ++s) capacity += t.capacity_bytes(s);

  bool have_bound = false;
  std::vector<std::vector<double>> grad(duals.mu.size());
  // One price: every class's part ILP, the Lagrangian bound, the subgradient of the consistency
  // prices (copies' choices − owners'), and the replicated assignment. Returns the memory
  // excess Σ_stages (memory − capacity) of that assignment.
  double last_bound = 0;
  auto price = [&](double lambda) {
    double sum = 0;
    bool exact = true;
    std::vector<int> choice(t.ops(), 0);
    for (size_t k = 0; k < grad.size(); ++k) grad[k].assign(duals.mu[k].size(), 0.0);
    for (const Class& k : classes) {
      const double left = opt.time_limit_s - seconds_since(t0);
      IlpPart part{parts[k.rep].ops, parts[k.rep].terms, lambda, {}};
      for (int op : duals.copies[k.rep]) part.op_price_s.emplace_back(op, duals.mu[duals.key_of[op]]);
      const size_t n_copies = part.op_price_s.size();
      for (int op : duals.own[k.rep]) {
        std::vector<double> minus = duals.mu[duals.key_of[op]];
        for (double& v : minus) v = -v;
        part.op_price_s.emplace_back(op, std::move(minus));
      }
      const IlpPartResult pr = solve_ilp_part(t, part, std::max(1.0, left));
      ++r.solves;
      r.columns = std::max(r.columns, pr.columns);
      exact &= pr.optimal;
      const double count = static_cast<double>(k.members.size());
      sum += pr.bound_s * count;
      if (pr.choice.empty()) continue;
      for (int p : k.members) {
        for (size_t i = 0; i < parts[p].ops.size(); ++i) choice[parts[p].ops[i]] = pr.choice[i];
      }
      for (size_t i = 0; i < part.op_price_s.size(); ++i) {
        const int key = duals.key_of[part.op_price_s[i].first];
        grad[key][pr.priced_choice[i]] += i < n_copies ? count : -count;
      }
    }
    const double bound = sum - lambda * capacity;
    last_bound = bound;
    if (!have_bound || bound > r.bound_s) {
      r.bound_s = bound;
      r.memory_price_s_per_byte = lambda;
      r.exact_parts = exact;
      have_bound = true;
    }
    const Objective o = offer(std::move(choice));
    double used = 0;
    for (double m : o.memory_bytes) used += m;
    if (opt.progress) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "ilp-tied: bound %.4f s, best scheme %.4f s (memory price %.4g s/GB, step %d)",
                    r.bound_s, r.objective_s, lambda * 1e9, r.solves / std::max(1, r.classes));
      opt.progress(buf);
    }
    return used - capacity;
  };
  int steps = 0;
  auto more = [&] { return steps < opt.price_steps && seconds_since(t0) < opt.time_limit_s; };
  auto closed = [&] { return r.fits && r.objective_s <= r.bound_s + 1e-9 + 1e-6 * std::abs(r.bound_s); };

  // Memory: the bound is concave in λ with the memory excess as supergradient: find a price at
  // which the replicated layers fit, then bisect (geometrically) on the sign of the excess.
  ++steps;
  double lambda = 0;
  if (price(0) > 0) {
    double lo = 0, hi = std::max(r.bound_s, 1e-6) / std::max(capacity, 1.0);  // memory priced like time
    for (; more(); hi *= 8) {
      ++steps;
      if (price(hi) <= 0) break;
      lo = hi;
    }
    while (more() && !(lo > 0 && hi / lo < 1.01)) {
      ++steps;
      const double mid = lo > 0 ? std::sqrt(lo * hi) : hi / 8;
      (price(mid) > 0 ? lo : hi) = mid;
    }
    lambda = r.memory_price_s_per_byte;
  }
  // Consistency: Polyak steps on μ towards the best scheme's objective, at the best λ; the step
  // halves whenever a step does not raise the best bound (the target overestimates what μ can
  // reach), and three such steps in a row end it (what is left is not the boundaries' to close).
  if (lambda > 0 && !closed()) price(lambda);
  double theta = 1;
  int stalls = 0;
  for (int it = 0; it < opt.consistency_steps && seconds_since(t0) < opt.time_limit_s && !closed(); ++it) {
    double norm = 0;
    for (const auto& g : grad) {
      for (double v : g) norm += v * v;
    }
    if (norm == 0) break;  // the copies agree with their owners: the relaxation is exact here
    const double step = theta * std::max(r.objective_s - r.bound_s, 1e-9) / norm;
    for (size_t k = 0; k < grad.size(); ++k) {
      for (size_t c = 0; c < grad[k].size(); ++c) duals.mu[k][c] += step * grad[k][c];
    }
    ++r.consistency_steps;
    const double best = r.bound_s;
    price(lambda);
    if (last_bound <= best) {
      theta /= 2;
      if (++stalls == 3) break;
    } else {
      stalls = 0;
    }
  }
  r.optimal = closed();
  if (r.optimal) r.bound_s = std::min(r.bound_s, r.objective_s);
  r.seconds = seconds_since(t0);
  return r;
}

}  // namespace autoddl::search
