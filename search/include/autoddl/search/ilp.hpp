// The exact optimum of the table objective as an integer program (Alpa, OSDI'22, intra-op
// pass): one binary per (coordinate, choice) with Σ = 1; each pairwise term linearized over the
// boxing states of its two sides by a transportation block (e_ab ≥ 0, Σ_b e_ab = u_a, Σ_a e_ab
// = v_b, where u_a is the sum of the side's binaries whose state is a), which is exact for 0/1
// binaries and tighter than e ≥ u + v − 1; a backward term with several consumers charges
// h_ab ≥ e^j_ab (each distinct gradient state once); per-stage memory ≤ capacity as hard rows.
// Solved by COIN-OR CBC under a time limit, warm-started from a known assignment.
#pragma once
#include <string>
#include <vector>

#include "autoddl/search/coordinate_descent.hpp"
#include "autoddl/search/cost_tables.hpp"

namespace autoddl::search {

struct IlpOptions {
  double time_limit_s = 60;
  const std::vector<int>* warm_start = nullptr;  // a choice per op (consistent with ties)
};

struct IlpResult {
  bool has_solution = false;
  bool optimal = false;     // CBC proved it
  bool infeasible = false;  // CBC proved no assignment fits memory
  std::vector<int> choice;
  double objective_s = 0;   // the table objective of `choice` (recomputed, not CBC's number)
  double bound_s = 0;       // CBC's best lower bound
  double gap = 0;           // (objective − bound) / objective
  double seconds = 0;
  int columns = 0, rows = 0, binaries = 0;
  std::string status;
};

IlpResult solve_ilp(const CostTables& t, const Coordinates& co, const IlpOptions& opt);

// A part of the objective (ilp_tied.hpp): `ops` pay their node cost and, at a price per byte,
// their memory (the Lagrangian relaxation of the memory rows: no row, price · bytes in the
// objective); `terms` are priced; the terms' members outside `ops` are free copies, so the
// part's optimum is a lower bound of its share of any full assignment.
// `op_price_s` adds a price per choice to an op's binaries (charged or copy): the multipliers
// of the consistency between a copy and the op it copies, which cancel over the whole model.
struct IlpPart {
  std::vector<int> ops;
  std::vector<int> terms;
  double memory_price_s_per_byte = 0;
  std::vector<std::pair<int, std::vector<double>>> op_price_s;  // (op, seconds per choice)
};

struct IlpPartResult {
  bool optimal = false;
  std::vector<int> choice;  // per part op, in the order of IlpPart::ops (empty: no solution)
  std::vector<int> priced_choice;  // per IlpPart::op_price_s entry: the op's choice
  double objective_s = 0;   // CBC's value of `choice` (memory priced)
  double bound_s = 0;       // CBC's lower bound (= objective_s when optimal)
  int columns = 0;
};

IlpPartResult solve_ilp_part(const CostTables& t, const IlpPart& part, double time_limit_s);

}  // namespace autoddl::search
