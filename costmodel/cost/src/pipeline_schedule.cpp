// Per-stage unit orders of GPipe, 1F1B and interleaved 1F1B (see pipeline_schedule.hpp).
#include "autoddl/costmodel/pipeline_schedule.hpp"

#include <algorithm>

namespace autoddl::costmodel {

namespace {
// Units of one direction in Megatron's virtual-micro-batch order: groups of `stages`
// micro-batches, local chunks in order (forward) or reversed (backward) within a group.
std::vector<WorkUnit> ordered(int stages, int v, int stage, int m, bool forward) {
  std::vector<WorkUnit> out;
  out.reserve(static_cast<size_t>(m) * v);
  for (int g0 = 0; g0 < m; g0 += stages) {
    const int size = std::min(stages, m - g0);
    for (int x = 0; x < v; ++x) {
      const int local = forward ? x : v - 1 - x;
      for (int i = g0; i < g0 + size; ++i) out.push_back({local * stages + stage, i, forward});
    }
  }
  return out;
}
}  // namespace

std::vector<WorkUnit> stage_schedule(PipelineSchedule schedule, int stages, int chunks_per_stage,
                                     int stage, int micro_batches) {
  const int v = std::max(1, chunks_per_stage);
  const std::vector<WorkUnit> fwd = ordered(stages, v, stage, micro_batches, true);
  const std::vector<WorkUnit> bwd = ordered(stages, v, stage, micro_batches, false);
  const int total = static_cast<int>(fwd.size());
  std::vector<WorkUnit> out;
  out.reserve(2 * fwd.size());
  if (schedule == PipelineSchedule::gpipe) {
    out = fwd;
    out.insert(out.end(), bwd.begin(), bwd.end());
    return out;
  }
  const int warmup = std::min(total, v == 1 ? stages - stage - 1 : 2 * (stages - stage - 1) + (v - 1) * stages);
  int f = 0, b = 0;
  for (; f < warmup; ++f) out.push_back(fwd[static_cast<size_t>(f)]);
  while (f < total) {
    out.push_back(fwd[static_cast<size_t>(f++)]);
    out.push_back(bwd[static_cast<size_t>(b++)]);
  }
  while (b < total) out.push_back(bwd[static_cast<size_t>(b++)]);
  return out;
}

}  // namespace autoddl::costmodel
