// Phase "memory" of evaluate(): the peak bytes of one device per stage. Parameters are held at
// their storage SBP with a gradient of the same size and the optimizer state (split over the
// replicated dims under ZeRO-1), once per stage that reads them; a parameter used at a larger
// SBP than stored (ZeRO-3) adds its gathered copy, the largest of the stage's ops, transiently.
// Activations are kept at their producer's SBP for backward (activation_memory.hpp) times the
// micro-batches in flight on the stage; full recompute adds the largest block's recomputed
// tensors. search's cost tables charge parameters with param_memory and activations with
// in_flight_micro_batches.
#pragma once
#include <string>
#include <vector>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/eval_frame.hpp"

namespace autoddl::costmodel {

// Micro-batches whose activations stage `stage` holds at its peak: all m under GPipe, m capped at
// S − stage under 1F1B, and under interleaving 1 + (S − 1)/(S·v) times that (Narayanan et al.
// 2021, §2.2); 1 without a pipeline.
double in_flight_micro_batches(int stage, int stages, int micro_batches, PipelineSchedule schedule,
                               int virtual_stages);

// One device's bytes for a parameter stored as `storage` (its value, its gradient, the optimizer
// state), and the parameters whose state it steps; `optimizer_bytes_per_param` and
// `grad_bytes_per_param` as compute.hpp.
struct ParamMemory {
  double bytes = 0;
  double optimizer_params = 0;
};
ParamMemory param_memory(const Tensor& t, const NdSbp& storage, const std::vector<int>& sbp_shape,
                         bool shard_optimizer, double optimizer_bytes_per_param, double grad_bytes_per_param);

// The stage that keeps tensor t for backward: its producer's (at `producer_stage`), unless no op
// of that stage reads it, when it is the first stage that does (the receiver of a pipeline send).
int keeping_stage(const Graph& graph, const std::vector<int>& op_stage, int t, int producer_stage);

struct MemoryPhase {
  std::vector<double> optimizer_params;  // per stage: the local parameters its optimizer steps
  // Per stage: the activations one micro-batch keeps there for backward. A tensor that crosses a
  // stage boundary is kept by the receiving stage (Megatron-LM frees the sender's copy once sent,
  // deallocate_output_tensor in megatron/core/pipeline_parallel/schedules.py).
  std::vector<double> stage_activation_bytes;
  std::vector<double> stage_param_bytes;  // per stage: parameters, gradients and optimizer state
  double peak_bytes = 0, param_bytes = 0, activation_bytes = 0;  // at the peak stage
  int peak_stage = 0;
};
MemoryPhase stage_memory(const Graph& graph, const Scheme& scheme, const EvalFrame& frame);

// "peak memory 93.1 GB exceeds the 80.0 GB of a A100-80GB on stage 3 (parameters, ...)".
std::string memory_infeasible_reason(const MemoryPhase& memory, const GpuSpec& gpu, int stages);

}  // namespace autoddl::costmodel
