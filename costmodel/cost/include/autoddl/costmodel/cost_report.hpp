// CostReport: what the analytical model says about one scheme: iteration time and where it
// goes (compute, exposed communication by kind and phase, pipeline bubble), bytes and counts
// of collectives per device, peak memory and feasibility, throughput, and per-op rows.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autoddl/costmodel/comm_tally.hpp"

namespace autoddl::costmodel {

struct OpCostRow {
  std::string op;
  std::string signature;  // "x:(S(0),B) w:(B,S(1)) -> (S(0),S(2))"
  int stage = 0;
  double compute_s = 0;   // forward + backward (+ recompute) per iteration
  double boxing_s = 0;    // forward + backward boxing of its inputs per iteration
  double grad_sync_s = 0; // its parameters' gradient sync per iteration (may overlap)
};

struct CostReport {
  std::string model, cluster, scheme, mesh;
  int devices = 1;
  double iteration_s = 0;
  double compute_s = 0;          // compute on the critical path
  double comm_exposed_s = 0;     // communication on the critical path (boxing, send/recv, exposed grad sync)
  double fwd_boxing_s = 0, bwd_boxing_s = 0, grad_sync_s = 0, grad_sync_exposed_s = 0, send_recv_s = 0;
  // Expert parallelism's dispatch and combine all-to-alls on the critical path (part of the
  // boxing above). All of it: no overlap of the all-to-all with compute is modelled (Megatron's
  // --overlap-moe-expert-parallel-comm is not).
  double all_to_all_exposed_s = 0;
  // Context parallelism's KV exchange on the critical path (part of the boxing above): what the
  // p2p ring does not hide under the attention, or all of it without the ring.
  double context_parallel_exposed_s = 0;
  double context_parallel_s = 0;  // all of that exchange, hidden or not
  double bubble_s = 0;
  double stage_time_s = 0;        // slowest stage, one micro-batch forward + backward (with its comm)
  CommTally comm;                // all communication of one device per iteration, by kind
  double peak_memory_bytes = 0;
  double memory_capacity_bytes = 0;  // what training may use: the GPU's memory less its reserve
  double memory_reserve_bytes = 0;   // GpuSpec::memory_reserve_bytes
  double param_memory_bytes = 0, activation_memory_bytes = 0;
  // The gradients as the framework keeps and reduces them (grad_bytes_per_param,
  // grad_reduce_bytes_per_param): "fp32" for 16-bit training's main gradients by default.
  std::string grad_dtype, grad_reduce_dtype;
  bool feasible = true;
  std::string infeasible_reason;
  double params = 0;
  // 3 × the model's forward FLOPs (no recompute), Megatron-LM's convention (FlopsConvention::megatron):
  // what published MFU and TFLOP/s per GPU count, whichever attention kernel runs.
  double model_flops_per_iteration = 0;
  double model_flops_causal_per_iteration = 0;  // the same, causal cores halved (FlopsConvention::causal)
  double samples_per_s = 0;
  double model_tflops_per_gpu = 0;  // model_flops_per_iteration / iteration_s / devices
  int stages = 1, micro_batches = 1;
  std::vector<OpCostRow> per_op;
};

nlohmann::json to_json(const CostReport& r);

// How the search ranks two evaluations of schemes: a feasible one above one that does not fit,
// then the shorter iteration.
inline bool ranks_above(const CostReport& a, const CostReport& b) {
  return (a.feasible && !b.feasible) || (a.feasible == b.feasible && a.iteration_s < b.iteration_s);
}

}  // namespace autoddl::costmodel
