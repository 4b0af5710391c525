// `autoddl simulate --sync FILE` (issue 15): an SBP scheme's iteration simulated with SimGrid
// with its data-parallel gradient sync replaced by a strategy; built only with sim/. sim/ knows
// nothing of sync, so the composition lives here: the scheme is lowered as `simulate` lowers it
// (sim::lower_scheme), then the program's DDP bucket tasks are taken out and the strategy's
// transfers put in their place, as the sync module's own SimGrid evaluator emits them
// (simulated.hpp: all-reduce groups through sim/'s collectives, PS servers as a GPU host behind
// their node's NIC with one send/recv stream per worker and server, so pushes contend: incast):
//
// * per pipeline stage, per data-parallel group of that stage (one per position on the other
//   mesh dims), the stage's variables (scheme_sync.hpp) on the group's GPUs; a strategy's node
//   n is the group's n-th node;
// * a gradient is released by the backward task that makes it ready (the task a DDP bucket of
//   the gradient waited for; with merged compute the run of ops holding its op), so the
//   transfers overlap the rest of the last backward as the buckets did; a folded replica's
//   transfers wait for the group's computing GPU, as the lowering's buckets do;
// * the optimizer step waits for every transfer of its GPU.
// The analytical side of the report is `cost --sync`'s iteration and exposed sync (the
// analytical evaluator on the same timeline), so a difference over the tolerance is explained
// in the SimReport's discrepancy exactly as `simulate` explains one against `cost`.
#pragma once
#ifdef AUTODDL_SYNC_HAVE_SIM
#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/graph.hpp"
#include "autoddl/costmodel/iteration_plan.hpp"
#include "autoddl/costmodel/scheme.hpp"
#include "autoddl/sim/report.hpp"
#include "autoddl/sync/scheme_sync.hpp"

namespace autoddl::sync {

struct SchemeSyncSimulation {
  sim::LoweredProgram lowered;  // the strategy's transfers in place of the DDP buckets
  sim::SimResult result;
  sim::SimReport report;        // analytical: cost --sync's iteration
  SchemeSyncCost cost;          // cost --sync of the same scheme and strategy
  int64_t transfers = 0;        // the strategy's collectives and send/recv tasks
};

// Swaps `lowered`'s gradient-sync tasks for the strategy's (above); `plan` and `dp` are of the
// same scheme (evaluate(g, c, s, &plan), data_parallel_sync), `st` validated against dp.
// Returns the number of transfers emitted.
int64_t replace_gradient_sync(sim::LoweredProgram& lowered, const costmodel::Graph& g,
                              const costmodel::IterationPlan& plan, const DataParallelSync& dp, const Strategy& st);

// Everything `autoddl simulate --sync` needs: evaluate, lower, replace, simulate, report.
SchemeSyncSimulation simulate_scheme_with_strategy(const costmodel::Graph& g, const costmodel::ClusterSpec& c,
                                                   const costmodel::Scheme& s, const costmodel::IterationPlan& plan,
                                                   const DataParallelSync& dp, const Strategy& st,
                                                   const sim::SimOptions& options = {},
                                                   const sim::LoweringOptions& lowering = {});

}  // namespace autoddl::sync
#endif
