// Coordinate descent over the cost tables (AutoDDL's "customized CD"; OneFlow's
// SbpNode::GreedyStrategy and NbhGreedyStrategy, sbp-and-search.md §2.6). A coordinate is one op
// or, with tying, the ops at one position of identical layers. Plain mode: each coordinate takes
// the argmin of node + incident terms + memory penalty with its neighbours fixed, sweeping
// forward then backward in topological order until a fixed point. Neighbourhood mode then
// optimizes 2–4 adjacent coordinates jointly (branch and bound over their choices) from a work
// queue of dirty neighbours, which crosses valleys one-op moves cannot (column→row matmul
// pairs), solves windows of up to 8 coordinates along a path exactly by DP (a whole
// linear → bias → activation → linear → bias run), and sets connected regions that split over
// one mesh dim to replicate over it at once (an attention block, a diamond the other two moves
// cannot cross). Every accepted move lowers the objective,
// so the result is never worse than the seed.
#pragma once
#include <functional>
#include <vector>

#include "autoddl/search/assignment.hpp"

namespace autoddl::search {

// Groups of ops that take the same choice, with their terms and neighbours (CSR lists).
struct Coordinates {
  std::vector<int> op_begin, ops;          // members of coordinate k: ops[op_begin[k] .. op_begin[k+1])
  std::vector<int> of_op;                  // op -> coordinate
  std::vector<int> term_begin, terms;      // unique terms touching any member
  std::vector<int> nbr_begin, nbrs;        // coordinates sharing a term
  int size() const { return static_cast<int>(op_begin.size()) - 1; }
  int tied_groups = 0;                     // coordinates with more than one op
  // Tied coordinates solved once per class: while every coordinate's members hold one choice,
  // members of one op class and stage (no memory on other stages) cost the same, and so do terms
  // whose members sit at the same coordinates, ports and classes. Per coordinate, one
  // representative of each with its multiplicity (empty without tying).
  std::vector<int> rop_begin, rops, rop_mult;
  std::vector<int> rterm_begin, rterms, rterm_mult;
  bool reduced() const { return !rop_begin.empty(); }
  // Ops (terms) that every table prices alike get one kind: ops by op class, stage, the flags
  // term_cost reads and their node, memory and activation rows (an op holding memory on another
  // stage is a kind of its own); terms by everything term_cost reads besides the choices, with
  // their members' op kinds and ports (tied terms each their own). Two checks whose members and
  // terms have equal kinds and choices come out alike: the descent prices such a check once while
  // nothing moves (the layers of a transformer). Empty: not computed (no such reuse).
  std::vector<int> op_kind, term_kind;
};

// tie_layers: blocks (Op::block) whose ops have the same classes in the same order are tied
// position by position; other ops stay single.
Coordinates make_coordinates(const CostTables& t, bool tie_layers);

struct CdOptions {
  bool neighbourhood = false;
  int neighbourhood_size = 4;     // coordinates optimized jointly (2..4)
  int candidates_per_member = 32; // a joint search tries each member's best choices (+ current)
  long node_budget = 20000;       // search-tree nodes per neighbourhood
  // Neighbourhood mode also solves windows of up to window_size coordinates along a path
  // exactly by DP (window_size 0 = off) over every choice, or each coordinate's
  // window_candidates best by unary cost plus its current one when > 0.
  int window_size = 8;
  int window_candidates = 0;
  // Neighbourhood mode also tries region moves: a connected region (up to 24 coordinates) that
  // splits or sums over one mesh dim set to replicate over it at once (an attention block).
  bool region_moves = true;
  double time_limit_s = 1e9;
  int max_sweeps = 1000;
  // Skip a single, joint or window check that came back empty while nothing it reads has moved
  // since (exact: the same moves, the same end point; off only to test that).
  bool skip_repeated_checks = true;
  // A joint or window check whose local configuration (Coordinates::op_kind / term_kind, the
  // choices it reads) equals one that came back empty since the last move is not searched again
  // (exact, as skip_repeated_checks: identical layers at identical choices give the same answer;
  // off only to test that).
  bool memo_checks = true;
  // A window's DP prices a pair of coordinates once per group of choices the pair terms read
  // alike (CostTables::term_key; exact, the same moves; off only to test that).
  bool group_window_candidates = true;
  // Called now and then (at most every 0.5 s) with the objective and the sweeps done.
  std::function<void(double objective_s, int sweeps)> progress;
};

struct CdStats {
  double start_objective_s = 0, objective_s = 0;
  int sweeps = 0;
  long moves = 0;           // single-coordinate moves
  long joint_moves = 0;     // neighbourhood moves
  long window_moves = 0;    // chain-window DP moves
  long region_moves = 0;    // regions set to replicate over a mesh dim
  long neighbourhoods = 0;  // neighbourhoods searched
  long checks_skipped = 0;  // empty checks not repeated (CdOptions::skip_repeated_checks)
  long checks_reused = 0;   // joint and window checks answered by an identical one (memo_checks)
  double seconds = 0;
  bool time_limit_hit = false;
};

CdStats coordinate_descent(Assignment& a, const Coordinates& co, const CdOptions& opt);

}  // namespace autoddl::search
