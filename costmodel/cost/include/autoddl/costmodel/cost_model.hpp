// The analytical cost model: one training iteration of a scheme, in seconds (DESIGN.md,
// "Analytical cost"). Forward and backward boxing sit on the critical path; gradient sync is
// bucketed (DDP) and overlaps the rest of the last micro-batch's backward; a pipeline runs
// (m + S − 1) slots of its slowest stage (GPipe, 1F1B), the bubble shrinking by v when
// interleaved; memory over capacity makes the scheme infeasible, not fast.
#pragma once
#include <string>
#include <vector>

#include "autoddl/costmodel/boxing.hpp"
#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/cost_report.hpp"
#include "autoddl/costmodel/graph.hpp"
#include "autoddl/costmodel/iteration_plan.hpp"
#include "autoddl/costmodel/scheme.hpp"

namespace autoddl::costmodel {

// Throws InputError("scheme", "<field>", reason) when the scheme does not fit the graph or the
// mesh (wrong sizes, a split that does not divide a micro-batch shape).
CostReport evaluate(const Graph& graph, const ClusterSpec& cluster, const Scheme& scheme);
// The same, also recording in `plan` (when not null) every item it priced, for replays.
CostReport evaluate(const Graph& graph, const ClusterSpec& cluster, const Scheme& scheme,
                    IterationPlan* plan);

// The shape a tensor has in one micro-batch: batch-major (Tensor::batched) activations and
// inputs have axis 0 divided by m; parameters and batch-free tensors (positions) keep theirs.
Shape micro_batch_shape(const Tensor& t, int micro_batches);

// What one micro-batch does of an op's whole-batch work (Op::work): 1/m of it when the op
// runs on batch-major data, all of it when not (GPT's position lookup runs per micro-batch).
inline double micro_batch_work_share(const Graph& graph, const Op& op, int micro_batches) {
  const int t = op.outputs.empty() ? op.inputs[0] : op.outputs[0];
  return graph.tensors[t].batched ? 1.0 / micro_batches : 1.0;
}

// Ops whose activations Megatron's selective recompute drops: the attention core, i.e. ops
// reading or writing a rank-4 activation whose last two dims are equal (the s×s scores).
bool is_attention_core(const Graph& graph, const Op& op);

// Whether backward re-runs op's forward under `recompute`: selective re-runs the attention core,
// full the ops inside blocks (transformer layers), never the embeddings, final norm or head.
bool recomputed(const Graph& graph, const Op& op, Recompute recompute);

// The state of `table` a ZeRO-1 / distributed-optimizer replica updates for a parameter stored
// as `storage`: every replicated dim of size > 1 split on the first axis that divides (as ZeRO
// and Megatron shard the flat buffer); the storage's own state when no axis divides.
int optimizer_shard_state(const BoxingTable& table, const NdSbp& storage, const std::vector<int>& sbp_shape,
                          const Shape& shape);

// "x:(S(0),B) w:(B,S(1)) -> (S(0),S(2))" for tables and scheme files.
std::string signature_string(const Graph& graph, const Op& op, const OpSignature& sig);

}  // namespace autoddl::costmodel
