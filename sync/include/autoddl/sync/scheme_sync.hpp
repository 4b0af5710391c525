// One scheme, two levels (issue 15 item 9): an SBP scheme's data-parallel gradient sync, which
// the cost model prices as DDP buckets of all-reduce overlapped with the backward
// (cost_model.hpp), replaced by a sync strategy priced by this module's analytical evaluator
// (analytical.hpp). costmodel knows nothing of sync, so the composition lives here: it reads
// what evaluate() priced (IterationPlan: the buckets, each gradient's ready time, the end of
// the backward they overlap) and swaps the report's exposed sync for the strategy's.
//
// * The data-parallel group: the SBP mesh dims the gradient buckets all-reduce over. The group
//   holding GPU 0 becomes a cluster of its own: its nodes, its ranks per node as GPUs per node,
//   and each NIC's bandwidth divided among the groups of the dim that share a node (as the
//   mesh prices them, mesh.hpp).
// * Variables (variables.hpp) as one replica holds their gradients: each shape divided by the
//   splits of the parameter's storage on the other dims (tensor parallel), sparsity kept.
// * Timeline: each gradient's ready time and the backward's end, from the plan.
// * Iteration with the strategy = the report's iteration − its exposed sync + the strategy's.
// Pipelined schemes and gradient syncs that are not all-reduce (ZeRO's reduce-scatter) are
// refused: they have no single data-parallel all-reduce to replace.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/cost_report.hpp"
#include "autoddl/costmodel/graph.hpp"
#include "autoddl/costmodel/iteration_plan.hpp"
#include "autoddl/costmodel/scheme.hpp"
#include "autoddl/sync/analytical.hpp"
#include "autoddl/sync/strategy.hpp"

namespace autoddl::sync {

struct DataParallelSync {
  std::vector<int> dims;            // SBP mesh dims the gradients are all-reduced over
  int ranks = 1, nodes = 1, ranks_per_node = 1, groups_per_node = 1;
  costmodel::ClusterSpec cluster;   // the group as a cluster (strategies validate against it)
  std::vector<Variable> vars;       // per replica, in graph order
  SyncTimeline timeline;            // forward_s = 0: cost_with_strategy fills it from the report
  Strategy ddp;                     // evaluate()'s own buckets: one ring all-reduce group each
};

// Throws InputError("--sync", "", reason) for a pipelined scheme or a gradient sync that is
// not all-reduce over one set of mesh dims. `plan` is what evaluate(g, c, s, &plan) recorded.
DataParallelSync data_parallel_sync(const costmodel::Graph& g, const costmodel::ClusterSpec& c,
                                    const costmodel::Scheme& s, const costmodel::IterationPlan& plan);

struct SchemeSyncCost {
  double ddp_sync_s = 0, ddp_exposed_s = 0;  // the report's grad_sync_s, grad_sync_exposed_s
  double ddp_iteration_s = 0;                // the report's iteration
  Evaluation strategy;                       // over the group; its iteration_s is iteration_s
  double iteration_s = 0;                    // with the strategy
};

// `s` must have passed validate_strategy against dp.vars and dp.cluster.
SchemeSyncCost cost_with_strategy(const costmodel::CostReport& r, const DataParallelSync& dp,
                                  const Strategy& s);

// {"group": {...}, "ddp": {...}, "strategy": evaluation_to_json, "iteration_s", "speedup"}.
nlohmann::json scheme_sync_to_json(const DataParallelSync& dp, const SchemeSyncCost& cost);

}  // namespace autoddl::sync
