// Pipeline schedules as per-stage orders of work units (a forward or backward pass of one
// model chunk on one micro-batch). GPipe (Huang et al. 2019): all forwards, then all
// backwards. 1F1B (PipeDream-Flush, Narayanan et al. 2021): S−s−1 warm-up forwards, then one
// forward and one backward in turn, then the remaining backwards. Interleaved 1F1B (Megatron-LM,
// Narayanan et al. 2021, schedules.py): stage s holds chunks s, S+s, ..., (v−1)S+s; micro-batches
// go in groups of S, chunk-major within a group (backward: chunks in reverse), with
// 2(S−s−1) + (v−1)S warm-up forwards. A last group smaller than S (m % S != 0, which Megatron
// refuses) keeps the same pattern on the micro-batches it has. The simulator's lowering and
// calib's validation plan both replay an IterationPlan in these orders.
#pragma once
#include <vector>

#include "autoddl/costmodel/scheme.hpp"

namespace autoddl::costmodel {

struct WorkUnit {
  int chunk = 0;        // global chunk: local chunk · stages + stage
  int micro_batch = 0;
  bool forward = true;
};

// The order in which `stage` runs its units; `chunks_per_stage` is v (1 unless interleaved).
std::vector<WorkUnit> stage_schedule(PipelineSchedule schedule, int stages, int chunks_per_stage,
                                     int stage, int micro_batches);

}  // namespace autoddl::costmodel
