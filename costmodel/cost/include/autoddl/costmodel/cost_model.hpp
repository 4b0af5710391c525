// The analytical cost model: one training iteration of a scheme, in seconds (DESIGN.md,
// "Analytical cost"). Forward and backward boxing sit on the critical path; gradient sync is
// bucketed (DDP) and overlaps the rest of the last micro-batch's backward; a pipeline runs
// (m + S − 1) slots of its slowest stage (GPipe, 1F1B), the bubble shrinking by v when
// interleaved; memory over capacity makes the scheme infeasible, not fast. evaluate() composes
// the phases declared in eval_frame, op_compute, boxing_plan, grad_buckets, stage_memory and
// timeline.hpp (docs/architecture.md, "evaluate() phases"); this header includes the first
// four, whose helpers (micro_batch_shape, recomputed, optimizer_shard_state, ...) it used to hold.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autoddl/costmodel/boxing.hpp"
#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/cost_report.hpp"
#include "autoddl/costmodel/eval_frame.hpp"
#include "autoddl/costmodel/graph.hpp"
#include "autoddl/costmodel/grad_buckets.hpp"
#include "autoddl/costmodel/iteration_plan.hpp"
#include "autoddl/costmodel/op_compute.hpp"
#include "autoddl/costmodel/scheme.hpp"

namespace autoddl::costmodel {

// Throws InputError("scheme", "<field>", reason) when the scheme does not fit the graph or the
// mesh (wrong sizes, a split that does not divide a micro-batch shape).
CostReport evaluate(const Graph& graph, const ClusterSpec& cluster, const Scheme& scheme);
// The same, also recording in `plan` (when not null) every item it priced, for replays.
CostReport evaluate(const Graph& graph, const ClusterSpec& cluster, const Scheme& scheme,
                    IterationPlan* plan);

// Boxing tables kept across evaluate() calls on one cluster, per (mesh, pipeline dim): a walk
// over many schemes on the same meshes (the Megatron grid) builds each table once instead of
// once per scheme. Not thread-safe: one per thread; bound to the first cluster it is used with.
class EvalCache {
 public:
  BoxingCache& boxing(const ClusterSpec& cluster, const Scheme& scheme, const DeviceMesh& sbp_mesh);

 private:
  const ClusterSpec* cluster_ = nullptr;
  std::map<std::pair<std::vector<int>, int>, std::unique_ptr<BoxingCache>> by_mesh_;
};
// evaluate() with its boxing tables from `cache` (the same report).
CostReport evaluate(const Graph& graph, const ClusterSpec& cluster, const Scheme& scheme, EvalCache& cache);

// The memory phase alone: evaluate()'s peak_memory_bytes and feasible, without the time phases
// (compute, boxing, sync, timeline). A walk over thousands of layouts, most of them out of
// memory, checks this first and prices in full only those that fit.
struct MemoryFit {
  double peak_bytes = 0;
  bool fits = false;
};
MemoryFit memory_fit(const Graph& graph, const ClusterSpec& cluster, const Scheme& scheme);

// "x:(S(0),B) w:(B,S(1)) -> (S(0),S(2))" for tables and scheme files.
std::string signature_string(const Graph& graph, const Op& op, const OpSignature& sig);

}  // namespace autoddl::costmodel
