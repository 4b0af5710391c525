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
// * Pipelines: each stage's data-parallel group syncs the variables of that stage (those
//   whose gradients its buckets sync; a weight tied across stages is synced by both), overlapped
//   with the stage's last backward, as the cost model does with its buckets; one strategy file
//   covers every variable, and its servers are nodes of a stage's group (every stage's group
//   has the same shape). The exposed sync is the most any stage's runs past its backward.
// * Iteration with the strategy = the report's iteration − its exposed sync + the strategy's.
// ZeRO-1 and ZeRO-3 (a sharded optimizer, Megatron's distributed optimizer) are refused: their
// gradient sync is a reduce-scatter into the shard each replica updates, followed after the
// optimizer step by an all-gather of the updated parameters. A strategy's synchronizers (PS
// push/pull, all-reduce) leave every replica the whole reduced gradient, i.e. a replicated
// optimizer step; replacing the reduce-scatter with one would silently unshard the optimizer
// state (the memory the scheme was chosen for) or need a reduce-scatter architecture that
// AutoSync's strategy space (reference/autosync.md §1) does not have.
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

// One pipeline stage's share of the sync (the only one without a pipeline).
struct StageSync {
  int stage = 0;
  std::vector<char> synced;     // per variable of DataParallelSync::vars: this stage syncs it
  SyncTimeline timeline;        // indexed like DataParallelSync::vars; forward_s = 0
  std::vector<int> devices;     // the GPUs of the stage's group holding its first GPU, ascending
};

struct DataParallelSync {
  std::vector<int> dims;            // SBP mesh dims the gradients are all-reduced over
  int ranks = 1, nodes = 1, ranks_per_node = 1, groups_per_node = 1;
  costmodel::ClusterSpec cluster;   // the group as a cluster (strategies validate against it)
  std::vector<Variable> vars;       // per replica, in graph order
  std::vector<StageSync> stages;    // one per pipeline stage
  Strategy ddp;                     // evaluate()'s own buckets: one ring all-reduce group each
};

// Throws InputError("--sync", "", reason) for a gradient sync that is not all-reduce over one
// set of mesh dims (ZeRO, see above). `plan` is what evaluate(g, c, s, &plan) recorded.
DataParallelSync data_parallel_sync(const costmodel::Graph& g, const costmodel::ClusterSpec& c,
                                    const costmodel::Scheme& s, const costmodel::IterationPlan& plan);

// Every data-parallel group of `stage` (GPU ids, each ascending: node-major), one per position
// on the other mesh dims; the first holds the stage's first GPU.
std::vector<std::vector<int>> stage_groups(const costmodel::IterationPlan& plan, const std::vector<int>& dims,
                                           int stage);

// The variables `st` syncs and their configs in `s`, with `order` their ready times.
struct StageProblem {
  std::vector<Variable> vars;
  Strategy strategy;
  SyncTimeline timeline;
  std::vector<int> index;  // per stage variable: its index in DataParallelSync::vars
};
StageProblem stage_problem(const DataParallelSync& dp, const StageSync& st, const Strategy& s);

struct SchemeSyncCost {
  double ddp_sync_s = 0, ddp_exposed_s = 0;  // the report's grad_sync_s, grad_sync_exposed_s
  double ddp_iteration_s = 0;                // the report's iteration
  Evaluation strategy;                       // the slowest stage's; its iteration_s is iteration_s
  int slowest_stage = 0;
  std::vector<Evaluation> stages;            // per stage (one without a pipeline)
  double iteration_s = 0;                    // with the strategy
};

// `s` must have passed validate_strategy against dp.vars and dp.cluster.
SchemeSyncCost cost_with_strategy(const costmodel::CostReport& r, const DataParallelSync& dp,
                                  const Strategy& s);

// {"group": {...}, "ddp": {...}, "strategy": evaluation_to_json, "iteration_s", "speedup"}, and
// with a pipeline "slowest_stage" and "stages": [{"stage", "exposed_sync_s", "iteration_s"}].
nlohmann::json scheme_sync_to_json(const DataParallelSync& dp, const SchemeSyncCost& cost);

}  // namespace autoddl::sync
