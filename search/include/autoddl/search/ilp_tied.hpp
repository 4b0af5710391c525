// A certificate at scale: a lower bound (often the optimum) of the table objective from the ILP
// of one layer class instead of the whole model.
//
// The objective is additive: Σ_op node + Σ_term term, and memory per stage. Cut the ops into
// parts, one per layer (Op::block run) and one for the ops outside every layer (embedding, head,
// loss), and give every term to the part of its topologically last member (a layer's incoming
// residual edge belongs to that layer, whose producer lies in the layer before). In a part's
// ILP the term members of other parts are free copies: a binary per choice with no cost. Any
// full assignment restricted to a part (copies at their real choices) is feasible for it, so
// Σ_parts (part optimum) ≤ the full optimum. The memory rows couple the parts; they are
// relaxed by Lagrange: with a price λ ≥ 0 per byte each part pays λ · its memory, and
// Σ_parts opt_λ − λ · Σ_stages capacity ≤ the optimum over assignments that fit, for every λ
// (bisected on the sign of the memory excess). Identical layers (same op classes, node and
// memory costs, term structure and costs: a signature checked per part) have the same part
// ILP, so it is solved once per class and its value multiplied by the layer count: a 96-layer
// GPT is three ILPs (first layer, the 95 others, the rest), not one with 96 × the columns.
//
// A copy and the op it copies need not agree in the relaxation; prices μ per choice (added to
// the copy, subtracted from the op, shared by every op at one layer position so the layers stay
// identical) cancel in every consistent assignment and are raised by subgradient steps until
// the copies agree with their owners (tied boundary SBPs: then the relaxation lost nothing).
//
// The upper side: each price step's layer solutions, replicated into every layer of their
// class, are a full assignment; the best is the method's scheme. When it fits and its objective
// meets the bound, it is the optimum of the whole objective: a certificate; otherwise both
// numbers and their gap are reported. (The ILP over tied coordinates, make_coordinates(t, true),
// would give the best uniform scheme, but it keeps every layer's boundary terms, so it is as
// large as the full ILP.)
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "autoddl/search/cost_tables.hpp"

namespace autoddl::search {

struct TiedBoundOptions {
  double time_limit_s = 600;  // all part solves together
  int price_steps = 12;       // memory-price evaluations at most (each: one ILP per class)
  int consistency_steps = 30; // subgradient steps on the copy/owner prices at most
  std::function<void(const std::string&)> progress;
};

struct TiedBound {
  double bound_s = 0;          // lower bound of Σ node + Σ term over assignments that fit
  bool exact_parts = true;     // every part ILP proven optimal (else CBC's part bounds are used)
  std::vector<int> choice;     // the best replicated assignment (per op)
  double objective_s = 0;      // its table objective (penalty included)
  bool fits = false;           // it fits every stage's capacity
  bool optimal = false;        // it fits and its objective equals the bound: proven optimum
  int parts = 0, classes = 0;  // layers + rest, and distinct part ILPs
  int solves = 0;              // part ILPs solved (classes × price steps)
  int columns = 0;             // columns of the largest part ILP
  double memory_price_s_per_byte = 0;  // λ of the bound
  int consistency_steps = 0;   // subgradient steps taken on the copy/owner prices
  double seconds = 0;
};

TiedBound tied_layer_bound(const CostTables& t, const TiedBoundOptions& opt);

}  // namespace autoddl::search
