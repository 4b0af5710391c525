// `export --to megatron-bridge`: a Megatron layout as overrides of a Megatron-Bridge recipe's
// ConfigContainer (`cfg`), with the field names of Megatron-Bridge v0.6.0 (its
// recipes/llama/h100/llama3.py sets the same fields; training/comm_overlap.py CommOverlapConfig,
// training/mixed_precision.py's registered recipes).
#include <string>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/eval_frame.hpp"
#include "autoddl/costmodel/scheme_export.hpp"
#include "autoddl/costmodel/recompute_modules.hpp"

namespace autoddl::costmodel {

namespace {

const char* py(bool b) { return b ? "True" : "False"; }

}  // namespace

std::string write_megatron_bridge(const Graph& g, const MegatronLayout& l) {
  if (l.pp > 1 && l.schedule == PipelineSchedule::gpipe) {
    throw InputError("--scheme", "schedule", "gpipe: Megatron-Bridge runs 1F1B only (Megatron-Bridge v0.6.0)");
  }
  const DType dtype = training_dtype(g);
  std::string s = "# " + l.spec + ": " + std::to_string(l.tp * l.pp * l.dp * l.cp) + " GPUs = tp " + std::to_string(l.tp) +
                  " x pp " + std::to_string(l.pp) + (l.cp > 1 ? " x cp " + std::to_string(l.cp) : "") + " x dp " +
                  std::to_string(l.dp) +
                  " (the data-parallel size follows from the world size)\n";
  s += "from megatron.bridge.training.comm_overlap import CommOverlapConfig\n";
  auto set = [&](const std::string& key, const std::string& value) { s += "cfg." + key + " = " + value + "\n"; };
  set("model.tensor_model_parallel_size", std::to_string(l.tp));
  set("model.pipeline_model_parallel_size", std::to_string(l.pp));
  set("model.virtual_pipeline_model_parallel_size", l.interleave > 1 ? std::to_string(l.interleave) : "None");
  if (!l.pipeline_layout.empty()) set("model.pipeline_model_parallel_layout", "\"" + l.pipeline_layout + "\"");
  set("model.context_parallel_size", std::to_string(l.cp));
  if (l.cp > 1) set("model.cp_comm_type", l.cp_ring ? "\"p2p\"" : "\"all_gather\"");
  if (l.ep > 1) {
    set("model.expert_model_parallel_size", std::to_string(l.ep));
    set("model.expert_tensor_parallel_size", std::to_string(l.etp));
    set("model.moe_token_dispatcher_type", "\"alltoall\"");
  }
  // Multi-token prediction depths (the model's mtp knob), set either way on a Mixture-of-Experts
  // model: Megatron-Bridge's DeepSeek-V3 recipes turn one on by default (mtp_num_layers = 1).
  if (const int mtp = mtp_depths(g); mtp > 0) {
    set("model.mtp_num_layers", std::to_string(mtp));
  } else if (routed_experts(g) > 0) {
    set("model.mtp_num_layers", "None");
  }
  set("model.sequence_parallel", py(l.sequence_parallel));
  set("train.global_batch_size", std::to_string(l.global_batch_size));
  set("train.micro_batch_size", std::to_string(l.micro_batch_size));
  if (l.recompute == Recompute::none) set("model.recompute_granularity", "None");
  if (l.recompute == Recompute::selective) set("model.recompute_granularity", "\"selective\"");
  if (l.recompute_modules) {
    set("model.recompute_modules", "[\"" + recompute_modules_text(l.recompute_modules, "\", \"") + "\"]");
  }
  if (l.recompute == Recompute::full) {
    set("model.recompute_granularity", "\"full\"");
    set("model.recompute_method", "\"uniform\"");
    set("model.recompute_num_layers", "1");
  }
  set("ddp.use_distributed_optimizer", py(l.dist_opt));
  if (l.fsdp) {  // Megatron-FSDP, as Megatron-Bridge's Llama 3 70B Blackwell recipes set it
    set("ddp.use_megatron_fsdp", "True");
    set("ddp.data_parallel_sharding_strategy", "\"optim_grads_params\"");
    set("model.gradient_accumulation_fusion", "False");
    set("checkpoint.ckpt_format", "\"fsdp_dtensor\"");
    if (l.hsdp > 1) {  // hybrid sharding: replicas of the shard group, not sharded across
      set("ddp.num_distributed_optimizer_instances", std::to_string(l.hsdp));
      set("ddp.outer_dp_sharding_strategy", "\"no_shard\"");
    }
  }
  set("ddp.overlap_grad_reduce", "True");  // the cost model overlaps it with the last backward
  // Under Megatron-FSDP the same option prefetches each layer's parameter all-gather.
  set("ddp.overlap_param_gather", py(l.param_overlap || l.fsdp));
  // bf16 gradients reduced in fp32 main gradients unless grad_reduce_bf16 (fp16 reduces in fp16).
  set("ddp.grad_reduce_in_fp32", py(dtype == DType::bf16 && !l.grad_reduce_16bit));
  std::string overlap = "CommOverlapConfig(tp_comm_overlap=" + std::string(py(l.tp_overlap));
  if (l.interleave > 1) overlap += ", overlap_p2p_comm=" + std::string(py(l.pp_overlap));
  set("comm_overlap", overlap + ")");
  if (g.fp8_gemms) set("mixed_precision", "\"bf16_with_fp8_delayed_scaling_mixed\"");
  else if (dtype == DType::bf16) set("mixed_precision", "\"bf16_mixed\"");
  else if (dtype == DType::fp16) set("mixed_precision", "\"fp16_mixed\"");
  if (l.pp > 1 && l.scatter_gather_sends) {
    s += "# sg=1 prices pipeline sends scattered over tp (Megatron-LM v2.x); Megatron-core sends whole tensors: cost the layout with sg=0 for the program it runs\n";
  }
  return s;
}

}  // namespace autoddl::costmodel
