// Phase "timeline" of evaluate(): one micro-batch's forward and backward per stage (compute,
// boxing and sends of its ops, plus the gathers it runs for other stages' sends), and the
// iteration the slowest stage sets: m micro-batches, the pipeline bubble of (S − 1) slots
// (GPipe, 1F1B; divided by v when interleaved), the gradient sync's exposed tail, and the
// optimizer step with ZeRO-1's shard gather after it.
#pragma once
#include <vector>

#include "autoddl/costmodel/boxing_plan.hpp"
#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/cost_report.hpp"
#include "autoddl/costmodel/eval_frame.hpp"
#include "autoddl/costmodel/grad_buckets.hpp"
#include "autoddl/costmodel/op_compute.hpp"

namespace autoddl::costmodel {

// Seconds of one micro-batch per stage.
struct StageTimes {
  std::vector<double> fwd_s, bwd_s;  // each with its boxing and sends
  std::vector<double> compute_s;     // forward + backward compute
  std::vector<double> comm_s;        // boxing and sends
  std::vector<double> send_recv_s;   // sends (with scatter/gather's all-gathers)
  // pp_overlap only (else empty): sends hidden under the compute, and what their NCCL CTAs
  // cost that compute (in compute_s and fwd_s).
  std::vector<double> p2p_hidden_s, p2p_contention_s;
};
StageTimes stage_times(const EvalFrame& frame, const std::vector<OpCompute>& compute, const BoxingPlan& boxing);

// The bubble of a pipeline of `stages` whose slowest stage takes `stage_time_s` per micro-batch.
double pipeline_bubble_s(int stages, int virtual_stages, PipelineSchedule schedule, double stage_time_s);
// An iteration of `micro_batches` (interleaved with `virtual_stages` chunks per stage, 1F1B when
// 1) over the micro-batches' own time: 1 + (stages − 1)/(virtual_stages · micro_batches).
double pipeline_bubble_factor(int stages, int virtual_stages, double micro_batches);

// Sets the report's time fields from the slowest stage: stage_time_s, bubble_s, iteration_s,
// compute_s, comm_exposed_s, send_recv_s, fwd/bwd_boxing_s and comm (m micro-batches plus the
// sync); reads its grad_sync_exposed_s. The optimizer steps `optimizer_params` per stage; its
// seconds go to plan (not null). Returns the slowest stage.
int iteration_timeline(const GpuSpec& gpu, const EvalFrame& frame, PipelineSchedule schedule,
                       const std::vector<OpCompute>& compute, const BoxingPlan& boxing, const GradSyncPhase& sync,
                       const std::vector<double>& optimizer_params, CostReport& report, IterationPlan* plan);

}  // namespace autoddl::costmodel
