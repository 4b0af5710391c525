// One objective (issue #31 item 1): the descent's answer, re-descended under a gradient-sync
// weight at which the tables' objective *equals* evaluate()'s iteration at that answer.
//
// The tables are additive: per op its compute plus w × its gradient sync, per edge its boxing.
// What they cannot see is how much of the sync hides behind the backward (evaluate() buckets the
// gradients and overlaps them with the remaining backward), plus smaller non-additive parts
// (bucket latencies, the SM charge of overlapped collectives). At a scheme x the tables' time is
// T_w(x) = T_0(x) + w·S(x), linear in the weight, so the weight w* = (E(x) − T_0(x)) / S(x), with
// E(x) evaluate()'s iteration, makes the objective equal E at x: what hides is charged as the
// fraction of the sync that does not show there. The descent then continues from x under w*; a
// point evaluate() rates faster is kept and w* solved again there, until the descent stays put
// (x is a local optimum of an objective equal to evaluate() at x) or moves to a point evaluate()
// rates no faster (x kept, its objective still equal to E(x)), at most max_rounds times.
// w* is clamped to [0, kMaxSyncWeight]; a scheme with no gradient sync (S = 0) or a clamped
// weight keeps a gap, which the result states. So do pipeline tables (more than one stage):
// they sum every stage's work where evaluate() takes the slowest stage plus the bubble, a gap of
// about the stage count that no sync weight closes; they are left as the descent ended.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "autoddl/costmodel/cost_report.hpp"
#include "autoddl/costmodel/scheme.hpp"
#include "autoddl/search/coordinate_descent.hpp"
#include "autoddl/search/cost_tables.hpp"
#include "nlohmann/json.hpp"

namespace autoddl::search {

inline constexpr double kMaxSyncWeight = 4.0;

struct Reconciled {
  std::vector<int> choice;
  costmodel::CostReport report;  // evaluate() of choice
  double sync_weight = 1;        // the weight solved at choice
  double objective_s = 0;        // the tables' objective of choice at that weight
  double start_objective_s = 0;  // ... at the configured weight (the descent's own objective)
  int rounds = 0;                // descents under a solved weight
  long moves = 0;                // their moves, single and joint
  bool improved = false;         // evaluate() rates choice above the starting point
  bool converged = false;        // the last descent stayed put
  double seconds = 0;            // wall time of the reconciliation
  std::string gap_reason;        // non-empty when the objective cannot equal evaluate() here
  nlohmann::json details() const;
};

// The scheme a choice stands for: to_scheme() of the tables, or a method's own (cd-expert keeps
// the expert's sends, schedule, buckets and overlaps), which is what evaluate() judges.
using SchemeOf = std::function<costmodel::Scheme(const std::vector<int>&)>;

// `choice` and `report` (evaluate() of as_scheme(choice)) from the descent on `base`; `opt` the
// descent's options (its time limit bounds the whole reconciliation); `as_scheme` empty =
// to_scheme(base, choice).
Reconciled reconcile_objective(const CostTables& base, bool tie_layers, const std::vector<int>& choice,
                               const costmodel::CostReport& report, const CdOptions& opt, int max_rounds = 3,
                               const SchemeOf& as_scheme = {});

}  // namespace autoddl::search
