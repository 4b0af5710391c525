// `export --to megatron-lm`: a Megatron layout as Megatron-LM's pretrain_gpt.py arguments, with
// the names of megatron/training/arguments.py at tag core_r0.11.0. Each flag is the one the cost
// model's option stands for (expert_schemes.cpp says which Megatron behaviour each models).
#include <string>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/eval_frame.hpp"
#include "autoddl/costmodel/scheme_export.hpp"
#include "autoddl/costmodel/recompute_modules.hpp"

namespace autoddl::costmodel {

namespace {

void fail(const std::string& option, const std::string& why) {
  throw InputError("--scheme", option, why + " (Megatron-LM core_r0.11.0)");
}

}  // namespace

std::string write_megatron_lm(const Graph& g, const MegatronLayout& l) {
  const DType dtype = training_dtype(g);
  if (l.pp > 1 && l.schedule == PipelineSchedule::gpipe) fail("schedule", "gpipe: Megatron-LM runs 1F1B only");
  if (l.grad_reduce_16bit && dtype == DType::bf16) {
    fail("grad_reduce_bf16", "no flag reduces bf16 gradients in bf16 (bf16 runs reduce fp32 main gradients)");
  }
  std::string s;
  auto arg = [&](const std::string& a) { s += a + "\n"; };
  s += "# " + l.spec + ": " + std::to_string(l.tp * l.pp * l.dp * l.cp) + " GPUs = tp " + std::to_string(l.tp) + " x pp " +
       std::to_string(l.pp) + (l.cp > 1 ? " x cp " + std::to_string(l.cp) : "") + " x dp " + std::to_string(l.dp) +
       " (the data-parallel size follows from the world size)\n";
  s += "# model arguments (--num-layers, --hidden-size, --num-attention-heads, --seq-length, ...) are the model's own\n";
  arg("--tensor-model-parallel-size " + std::to_string(l.tp));
  arg("--pipeline-model-parallel-size " + std::to_string(l.pp));
  if (l.cp > 1) {
    arg("--context-parallel-size " + std::to_string(l.cp));
    // Transformer Engine reads the value as written: "all_gather", not --help's "allgather".
    arg(std::string("--cp-comm-type ") + (l.cp_ring ? "p2p" : "all_gather"));
  }
  if (l.ep > 1) {
    // the MoE model arguments (--num-experts, --moe-router-topk, ...) are the model's own
    arg("--expert-model-parallel-size " + std::to_string(l.ep));
    arg("--expert-tensor-parallel-size " + std::to_string(l.etp));
    arg("--moe-token-dispatcher-type alltoall");  // the all-to-all the cost model prices
  }
  if (const int mtp = mtp_depths(g); mtp > 0) {
    // Multi-token prediction (the model's mtp knob): Megatron-Core's MultiTokenPredictionBlock,
    // on the last pipeline stage unless the layout's m's place it.
    s += "# --mtp-num-layers is newer than core_r0.11.0 (core_r0.12.0 has it)\n";
    arg("--mtp-num-layers " + std::to_string(mtp));
  }
  if (!l.pipeline_layout.empty()) {
    // Uneven layers: the layout names every virtual stage (Megatron-Core derives the virtual
    // stages from it).
    s += "# --pipeline-model-parallel-layout is newer than core_r0.11.0 (Megatron-Core's flexible virtual pipeline layout): run it on a release that has it\n";
    arg("--pipeline-model-parallel-layout \"" + l.pipeline_layout + "\"");
  }
  if (l.interleave > 1) {
    if (l.pipeline_layout.empty()) arg("--num-virtual-stages-per-pipeline-rank " + std::to_string(l.interleave));
    // overlap_p2p_comm is on by default (store_false); pp_overlap=0 turns it off.
    if (!l.pp_overlap) arg("--no-overlap-p2p-communication");
  }
  // core_r0.11.0 parses --no-scatter-gather-tensors-in-pipeline but no code reads it: Megatron-core
  // sends whole activations between stages (Megatron-LM v2.x scattered them over tp, SC'21 §4.1).
  if (l.pp > 1 && l.scatter_gather_sends) {
    s += "# sg=1 prices pipeline sends scattered over tp (Megatron-LM v2.x); this version sends whole tensors: cost the layout with sg=0 for the program it runs\n";
  }
  if (l.sequence_parallel) arg("--sequence-parallel");
  if (l.tp_overlap) arg("--tp-comm-overlap");
  arg("--micro-batch-size " + std::to_string(l.micro_batch_size));
  arg("--global-batch-size " + std::to_string(l.global_batch_size));
  if (l.recompute == Recompute::selective) arg("--recompute-granularity selective");
  if (l.recompute_modules) arg("--recompute-modules " + recompute_modules_text(l.recompute_modules, " "));
  if (l.recompute == Recompute::full) {
    // Every layer recomputed from its input: the cost model's full recompute.
    arg("--recompute-granularity full");
    arg("--recompute-method uniform");
    arg("--recompute-num-layers 1");
  }
  if (l.fsdp) {
    // Megatron-LM's Megatron-FSDP user guide (docs/discussions/megatron-fsdp-user-guide): its
    // required flags; ZeRO-3 sharding of parameters, gradients and optimizer state. Its example
    // script adds --overlap-param-gather, which under Megatron-FSDP prefetches each layer's
    // parameter all-gather (what fsdp=1 prices).
    s += "# Megatron-FSDP (--use-megatron-fsdp) is newer than core_r0.11.0: run it on a release that has it\n";
    arg("--use-megatron-fsdp");
    arg("--data-parallel-sharding-strategy optim_grads_params");
    arg("--no-gradient-accumulation-fusion");
    arg("--ckpt-format fsdp_dtensor");
    if (l.hsdp > 1) {  // hybrid sharding: replicas of the shard group, not sharded across
      arg("--num-distributed-optimizer-instances " + std::to_string(l.hsdp));
      arg("--outer-dp-sharding-strategy no_shard");
    }
  }
  if (l.dist_opt) arg("--use-distributed-optimizer");
  // The cost model overlaps the gradient reduction with the last micro-batch's backward.
  arg("--overlap-grad-reduce");
  if (l.param_overlap || l.fsdp) arg("--overlap-param-gather");
  if (dtype == DType::bf16) arg("--bf16");
  if (dtype == DType::fp16) arg("--fp16");
  // Transformer Engine's delayed-scaling recipe, E4M3 forward and E5M2 backward (what NeMo runs).
  if (g.fp8_gemms) arg("--fp8-format hybrid");
  return s;
}

}  // namespace autoddl::costmodel
