// `export --to torchtitan`: a Megatron layout as a torchtitan job config (TOML), with the keys of
// torchtitan/config/job_config.py at tag v0.2.2 (the last release configured by TOML files; its
// main branch has since moved to Python config registries). torchtitan runs Megatron's layouts
// with other machinery (PyTorch DTensor, FSDP2, torch.distributed.pipelining), so where its
// program differs from the one the cost model priced the config says so in a `# note:` line
// under the key concerned; what it cannot run at all is refused with one line.
#include <string>
#include <vector>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/eval_frame.hpp"
#include "autoddl/costmodel/pipeline_layout.hpp"
#include "autoddl/costmodel/recompute_modules.hpp"
#include "autoddl/costmodel/scheme_export.hpp"

namespace autoddl::costmodel {

namespace {

constexpr const char* kVersion = "torchtitan v0.2.2";

void fail(const std::string& option, const std::string& why) {
  throw InputError("--scheme", option, why + " (" + kVersion + ")");
}

std::string str(const std::string& s) { return "\"" + s + "\""; }  // a TOML string

// One TOML table: its lines in order, keys and `# note:` comments under them.
struct Table {
  std::string name;
  std::vector<std::string> lines;
  void set(const std::string& key, const std::string& value) { lines.push_back(key + " = " + value); }
  void note(const std::string& why) { lines.push_back("# note: " + why); }
};

// The sequence length the model was built with: the attention core's queries are (batch,
// heads, seq, head_dim), fused (OpKind::attention) or not (Q·Kᵀ opens the core).
int64_t sequence_length(const Graph& g) {
  for (const Op& op : g.ops) {
    if (!op.attention_core || op.inputs.empty()) continue;
    const Shape& q = g.tensors[op.inputs[0]].shape;
    if (q.size() == 4) return q[2];
  }
  return 0;
}

// The decoder layers (the model's blocks, multi-token-prediction blocks excluded), in order.
int64_t decoder_layers(const Graph& g) {
  int64_t n = 0;
  const std::string* last = nullptr;
  for (const Op& op : g.ops) {
    if (op.block.empty() || is_mtp_block(op.block)) continue;
    if (!last || *last != op.block) ++n;
    last = &op.block;
  }
  return n;
}

// Megatron's pipeline layout as torchtitan's module_fqns_per_model_part: the module names its
// decoder models share (llama3, llama4, qwen3, deepseek_v3: tok_embeddings, layers.N, norm,
// output), one list per virtual stage in the same order (stage i on pipeline rank i % pp, as
// torchtitan's looped schedules place them).
std::string module_fqns(const std::string& layout) {
  std::string out = "[";
  int layer = 0;
  bool first_stage = true;
  for (const std::string& stage : parse_pipeline_layout(layout)) {
    std::vector<std::string> names;
    for (char c : stage) {
      if (c == 'E') names.push_back("tok_embeddings");
      if (c == 't') names.push_back("layers." + std::to_string(layer++));
      if (c == 'L') {
        names.push_back("norm");
        names.push_back("output");
      }
    }
    out += first_stage ? "[" : ", [";
    first_stage = false;
    for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + str(names[i]);
    out += "]";
  }
  return out + "]";
}

}  // namespace

std::string write_torchtitan(const Graph& g, const MegatronLayout& l) {
  const DType dtype = training_dtype(g);
  // Refusals first: what torchtitan v0.2.2 cannot run in any form.
  if (const int mtp = mtp_depths(g); mtp > 0) {
    fail("mtp", "no torchtitan model has multi-token prediction layers (the model has " + std::to_string(mtp) +
                    "): cost the model with mtp=0");
  }
  if (l.ep > 1 && l.etp != 1 && l.etp != l.tp) {
    fail("etp", std::to_string(l.etp) + ": expert tensor parallelism is 1 or tp (" + std::to_string(l.tp) + ") only");
  }
  const int64_t seq = sequence_length(g);
  // Tensor parallelism always splits the sequence (sequence parallelism), and context
  // parallelism's load balancing cuts it into 2·cp chunks: parallel_dims.seq_len_divisor.
  const int64_t divisor = int64_t{l.tp} * 2 * l.cp;
  if (seq > 0 && seq % divisor != 0) {
    fail("tp", "the sequence " + std::to_string(seq) + " does not split into tp x 2 x cp = " + std::to_string(divisor) +
                   " pieces (torchtitan's sequence parallelism and context-parallel load balancing need it)");
  }
  const int64_t micro_batches = l.global_batch_size / (l.micro_batch_size * l.dp);

  Table model{"model", {}}, training{"training", {}}, par{"parallelism", {}}, ac{"activation_checkpoint", {}};
  Table compile{"compile", {}}, float8{"quantize.linear.float8", {}};

  // The batch: without a pipeline, local_batch_size is one micro-batch and torchtitan
  // accumulates global / (local x dp) of them; with one, the whole per-rank batch is one step
  // and the schedule cuts it into pipeline_parallel_microbatch_size pieces.
  training.set("local_batch_size", std::to_string(l.pp > 1 ? l.global_batch_size / l.dp : l.micro_batch_size));
  training.set("global_batch_size", std::to_string(l.global_batch_size));
  if (seq > 0) training.set("seq_len", std::to_string(seq));
  if (l.pp == 1 && micro_batches > 1 && l.dp * l.cp > 1 && !l.fsdp) {
    training.note("torchtitan's training loop reduces the gradients after each of the " + std::to_string(micro_batches) +
                  " accumulated micro-batches (no no_sync), the cost model once per iteration: " +
                  std::to_string(micro_batches) + "x the data-parallel traffic priced");
  }
  training.set("mixed_precision_param", str(dtype == DType::fp32 ? "float32" : "bfloat16"));
  // FSDP2 reduces in float32 (the only value v0.2.2 has): Megatron's default for bf16 too.
  training.set("mixed_precision_reduce", str("float32"));
  if (dtype == DType::fp16) {
    training.note("dtype fp16 was priced; torchtitan trains in bfloat16 or float32 only: bfloat16 has fp16's bytes and tensor-core rate");
  }
  if (l.grad_reduce_16bit && dtype != DType::fp32) {
    training.note("grad_reduce_bf16=1 priced 16-bit gradient reductions; torchtitan reduces in float32: twice the gradient bytes");
  }
  if (!fused_attention(g)) {
    training.note("the model's attention core is unfused (flash=0); torchtitan runs it as one SDPA kernel (no s x s scores kept): cost the model with flash=1 for the program it runs");
  }

  // Data parallelism. DDP (replicate) runs only alone in torchtitan ("DDP has not supported > 1D
  // parallelism"), so beside tp, pp, cp or ep the data-parallel ranks are FSDP2's shard dim.
  const bool ddp = l.tp == 1 && l.pp == 1 && l.cp == 1 && l.ep == 1 && !l.dist_opt;
  // HSDP (hsdp=R): R replicas of a dp/R shard group.
  const int replicas = ddp ? l.dp : l.hsdp;
  par.set("data_parallel_replicate_degree", std::to_string(replicas));
  par.set("data_parallel_shard_degree", std::to_string(l.dp / replicas));
  if (ddp && l.dp > 1) {
    par.note("DDP keeps float32 parameters and runs the GEMMs under torch.autocast in " +
             std::string(dtype == DType::fp32 ? "float32" : "bfloat16") +
             "; Megatron keeps 16-bit parameters beside float32 master weights");
  }
  if (l.fsdp) {
    // Megatron-FSDP as priced: each layer's parameters freed after its forward and gathered
    // again (prefetched) for its backward, every micro-batch's gradients reduce-scattered.
    par.set("fsdp_reshard_after_forward", str("always"));
  } else if (!ddp && l.dp * l.cp > 1) {
    // Parameters gathered once and kept through backward, gradients reduce-scattered,
    // optimizer states and float32 master weights sharded: Megatron's distributed optimizer.
    par.set("fsdp_reshard_after_forward", str("never"));
    if (!l.dist_opt) {
      par.note("dist_opt=0 priced replicated optimizer states and a gradient all-reduce; torchtitan runs this data parallelism as FSDP2: reduce-scatter plus all-gather (the all-reduce's bytes), parameters, gradients and optimizer states sharded between steps: less memory than priced");
    } else if (!l.param_overlap) {
      par.note("param_overlap=0 priced an exposed parameter all-gather; FSDP2 prefetches the next layer's during the forward: faster than priced");
    }
  }
  par.set("tensor_parallel_degree", std::to_string(l.tp));
  if (l.tp > 1 && !l.sequence_parallel) {
    par.note("sp=0 was priced; torchtitan's tensor parallelism always splits the sequence (its norms are SequenceParallel): cost the layout with sp=1 for the program it runs");
  }
  if (l.tp_overlap) {
    // Megatron's --tp-comm-overlap: the GEMMs overlap their tensor-parallel collectives.
    par.set("enable_async_tensor_parallel", "true");
    par.note("async tensor parallelism is torch.compile's micro-pipelining, not Transformer Engine's userbuffers; v0.2.2 needs [compile] for it");
  }

  par.set("pipeline_parallel_degree", std::to_string(l.pp));
  if (l.pp > 1) {
    const char* schedule = l.interleave > 1 ? "Interleaved1F1B"
                           : l.schedule == PipelineSchedule::gpipe ? "GPipe"
                                                                    : "1F1B";
    par.set("pipeline_parallel_schedule", str(schedule));
    par.set("pipeline_parallel_microbatch_size", std::to_string(l.micro_batch_size));
    if (!l.pipeline_layout.empty()) {
      par.set("module_fqns_per_model_part", module_fqns(l.pipeline_layout));
    } else {
      // Megatron's even split: every virtual stage the same number of layers, the embedding
      // and the output layer on top of the first and last. torchtitan's defaults give those two
      // stages a layer less (pipeline_parallel_{first,last}_stage_less_layers = 1): zero them.
      const int64_t layers = decoder_layers(g), chunks = int64_t{l.pp} * l.interleave;
      if (layers == 0 || layers % chunks != 0) {
        fail("pp", std::to_string(layers) + " layers do not split evenly over pp x interleave = " + std::to_string(chunks) +
                       " stages");
      }
      par.set("pipeline_parallel_layers_per_stage", std::to_string(layers / chunks));
      par.set("pipeline_parallel_first_stage_less_layers", "0");
      par.set("pipeline_parallel_last_stage_less_layers", "0");
    }
    if (l.interleave > 1 && !l.pp_overlap) {
      par.note("pp_overlap=0 priced stage sends that wait; torch.distributed.pipelining posts them asynchronously (it has no switch): faster than priced");
    }
  }

  par.set("context_parallel_degree", std::to_string(l.cp));
  if (l.cp > 1) {
    // Megatron's p2p ring passes K/V to the next rank each step: the all-to-all rotater's
    // shift; all_gather gathers them once.
    par.set("context_parallel_rotate_method", str(l.cp_ring ? "alltoall" : "allgather"));
  }
  if (l.ep > 1) {
    par.set("expert_parallel_degree", std::to_string(l.ep));
    par.set("expert_tensor_parallel_degree", std::to_string(l.etp));
    par.set("expert_parallel_comm_backend", str("standard"));  // all-to-all, as priced
  }

  if (l.recompute == Recompute::none) ac.set("mode", str("none"));  // v0.2.2's default is selective
  if (l.recompute == Recompute::full) ac.set("mode", str("full"));   // each layer from its input
  if (l.recompute == Recompute::selective) {
    if (l.recompute_modules == 0 || l.recompute_modules == recompute_module_bit("core_attn")) {
      // Megatron's core_attn recompute drops the attention core's s x s scores; torchtitan's
      // SDPA kernels never keep them and recompute them inside their backward.
      ac.set("mode", str("none"));
      ac.note("recompute=selective (core_attn) was priced; torchtitan's SDPA keeps no attention scores to drop, so nothing is recomputed outside its kernel: faster than priced");
    } else {
      ac.set("mode", str("selective"));
      ac.set("selective_ac_option", str("op"));
      ac.note("recompute_modules=" + recompute_modules_text(l.recompute_modules) +
              " has no torchtitan equivalent; its per-op selective recompute keeps the attention output and every other matmul output and re-runs the rest: more recompute and less activation memory than priced");
    }
  }

  if (g.fp8_gemms) {
    // The layers' Linears in FP8, the output layer not (runs_fp8_gemm), as priced.
    model.set("converters", "[" + str("quantize.linear.float8") + "]");
    float8.set("filter_fqns", "[" + str("output") + "]");
    float8.note("torchao's float8 scales each tensor dynamically (tensorwise), Transformer Engine's hybrid recipe by delayed scaling");
  }
  if (l.tp_overlap || g.fp8_gemms) {
    // Async TP runs only compiled; float8's casts are fast only fused (docs/float8.md).
    compile.set("enable", "true");
    compile.set("components", "[" + str("model") + ", " + str("loss") + "]");
    compile.note("torch.compile also fuses the elementwise kernels: compute may be faster than priced");
  }

  std::string s = "# " + l.spec + ": " + std::to_string(l.tp * l.pp * l.dp * l.cp) + " GPUs = tp " + std::to_string(l.tp) +
                  " x pp " + std::to_string(l.pp) + (l.cp > 1 ? " x cp " + std::to_string(l.cp) : "") + " x dp " +
                  std::to_string(l.dp) + "\n";
  s += "# [model] name, flavor and hf_assets_path are the model's own (torchtitan's llama3, llama4, qwen3, deepseek_v3, ...)\n";
  for (const Table* t : {&model, &training, &par, &ac, &compile, &float8}) {
    if (t->lines.empty()) continue;
    s += "\n[" + t->name + "]\n";
    for (const std::string& line : t->lines) s += line + "\n";
  }
  return s;
}

}  // namespace autoddl::costmodel
