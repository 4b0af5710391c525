// CostReport → JSON (the documented CostReport format; docs/reports.md, "CostReport").
#include "autoddl/costmodel/cost_report.hpp"

namespace autoddl::costmodel {

nlohmann::json to_json(const CostReport& r) {
  nlohmann::json by_time, by_bytes, by_count;
  for (const CollectiveInfo& k : collective_kinds()) {
    auto i = static_cast<size_t>(k.kind);
    std::string name(k.name);
    by_time[name] = r.comm.time_s[i];
    by_bytes[name] = r.comm.bytes[i];
    by_count[name] = r.comm.count[i];
  }
  nlohmann::json ops = nlohmann::json::array();
  for (const OpCostRow& o : r.per_op) {
    ops.push_back({{"op", o.op}, {"signature", o.signature}, {"stage", o.stage},
                   {"compute_s", o.compute_s}, {"boxing_s", o.boxing_s}, {"grad_sync_s", o.grad_sync_s}});
  }
  return {{"model", r.model},
          {"cluster", r.cluster},
          {"scheme", r.scheme},
          {"mesh", r.mesh},
          {"devices", r.devices},
          {"stages", r.stages},
          {"micro_batches", r.micro_batches},
          {"iteration_s", r.iteration_s},
          {"compute_s", r.compute_s},
          {"comm_exposed_s", r.comm_exposed_s},
          {"fwd_boxing_s", r.fwd_boxing_s},
          {"bwd_boxing_s", r.bwd_boxing_s},
          {"send_recv_s", r.send_recv_s},
          {"all_to_all_exposed_s", r.all_to_all_exposed_s},
          {"context_parallel_exposed_s", r.context_parallel_exposed_s},
          {"context_parallel_s", r.context_parallel_s},
          {"grad_sync_s", r.grad_sync_s},
          {"grad_sync_exposed_s", r.grad_sync_exposed_s},
          {"bubble_s", r.bubble_s},
          {"stage_time_s", r.stage_time_s},
          {"comm_s_by_kind", by_time},
          {"bytes_by_kind", by_bytes},
          {"count_by_kind", by_count},
          {"peak_memory_bytes", r.peak_memory_bytes},
          {"param_memory_bytes", r.param_memory_bytes},
          {"grad_dtype", r.grad_dtype},
          {"grad_reduce_dtype", r.grad_reduce_dtype},
          {"activation_memory_bytes", r.activation_memory_bytes},
          {"memory_capacity_bytes", r.memory_capacity_bytes},
          {"memory_reserve_bytes", r.memory_reserve_bytes},
          {"memory_margin_bytes", r.memory_capacity_bytes - r.peak_memory_bytes},
          {"feasible", r.feasible},
          {"infeasible_reason", r.infeasible_reason},
          {"params", r.params},
          {"model_flops_per_iteration", r.model_flops_per_iteration},
          {"model_flops_causal_per_iteration", r.model_flops_causal_per_iteration},
          {"model_flops_convention", "megatron-lm"},
          {"samples_per_s", r.samples_per_s},
          {"model_tflops_per_gpu", r.model_tflops_per_gpu},
          {"per_op", ops}};
}

}  // namespace autoddl::costmodel
