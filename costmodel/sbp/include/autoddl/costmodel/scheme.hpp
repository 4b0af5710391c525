// Scheme: how one model is parallelized on a mesh: one nd-SBP signature per op (over the SBP
// dims: the mesh without its pipeline dim), where each parameter is stored, pipeline stages
// and micro-batching, recompute, and the optimizer's sharding. Every expert scheme (dp, zero,
// megatron, owt) and every searched scheme is one of these, so one cost model judges them all.
#pragma once
#include <string>
#include <vector>

#include "autoddl/costmodel/graph.hpp"
#include "autoddl/costmodel/sbp.hpp"
#include "autoddl/costmodel/signature.hpp"

namespace autoddl::costmodel {

enum class PipelineSchedule : uint8_t { gpipe, one_f_one_b, interleaved };
enum class Recompute : uint8_t { none, selective, full };

std::string_view schedule_name(PipelineSchedule s);
std::string_view recompute_name(Recompute r);
bool parse_schedule(std::string_view s, PipelineSchedule& out);
bool parse_recompute(std::string_view s, Recompute& out);

struct Scheme {
  std::string name;              // "dp", "megatron:tp=8,pp=1,dp=2", "cd", a file name
  std::vector<int> mesh_shape;   // the whole mesh, pipeline dim included
  int pipeline_dim = -1;         // mesh dim whose index is the stage; -1 = no pipeline
  std::vector<OpSignature> op_sigs;  // per op, over the SBP dims
  // Per tensor: where a parameter and its gradient live (ignored for other tensors). A
  // parameter stored split but used broadcast is all-gathered before use (ZeRO-3 / FSDP).
  std::vector<NdSbp> param_storage;
  bool shard_optimizer = false;       // ZeRO-1: optimizer state split over the dims a parameter is replicated on
  bool regather_in_backward = false;  // ZeRO-3: split parameters are gathered again for backward
  // Megatron's --tp-comm-overlap (Transformer Engine userbuffers): the sequence-parallel
  // all-gather feeding a matmul and the reduce-scatter after one run chunked under that matmul's
  // GEMM, so only what exceeds the GEMM's time stays on the critical path (cost_model.cpp).
  bool overlap_tp_comm = false;
  // Megatron's --overlap-p2p-communication (interleaved schedule only): pipeline sends and
  // receives run on their own stream under the stage's compute; only what exceeds a
  // micro-batch's compute stays exposed.
  bool overlap_p2p_comm = false;
  // Megatron-LM's --grad-reduce-in-bf16: bf16 training reduces its gradients in bf16 instead of
  // its fp32 main gradients (grad_reduce_bytes_per_param, compute.hpp).
  bool grad_reduce_16bit = false;
  // Megatron-LM's --overlap-param-gather (with the distributed optimizer): the all-gather of the
  // updated shards runs bucket by bucket under the next iteration's forward instead of after the
  // step; only the first bucket and what outlasts one micro-batch's forward stay exposed.
  bool overlap_param_gather = false;
  // Megatron-Core's context parallelism with cp_comm_type p2p (its default): fused attention
  // whose queries are sequence-split passes the keys and values round a ring of the cp ranks,
  // each step's exchange under the previous step's attention block, so only what exceeds
  // (cp-1)/cp of the attention's compute stays exposed, forward (K, V) and backward (K, V again,
  // and dK, dV). Off: the KV exchange is a plain all-gather / reduce-scatter (cp_comm_type
  // all_gather, or any searched scheme that gathers them).
  bool overlap_cp_comm = false;
  // Fully sharded data parallelism as Megatron-FSDP (--use-megatron-fsdp
  // --data-parallel-sharding-strategy optim_grads_params) and PyTorch FSDP2 run it, on a scheme
  // whose parameters are stored split (param_storage) and gathered again for backward
  // (regather_in_backward): each layer's parameter all-gather is prefetched under the previous
  // layer's forward, its backward re-gather under the next layer's backward (boxing_plan.cpp), two
  // layers' gathered parameters and one layer's gradients are held at a time (stage_memory.cpp),
  // and every micro-batch's gradients are reduce-scattered into the shards under its backward
  // (sharded gradients leave no full buffer to accumulate in; grad_buckets.cpp). Off: ZeRO-3 as
  // `zero3` prices it, every gather on the critical path.
  bool fsdp = false;
  std::vector<int> op_chunk;          // per op, pipeline chunk (stage = chunk % stages); empty = 0
  int virtual_stages = 1;             // interleaved 1F1B: chunks per stage (v)
  int micro_batches = 1;              // per iteration (gradient accumulation or pipeline)
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  Recompute recompute = Recompute::none;
  // With Recompute::selective, Megatron-Core's --recompute-modules as bits of the
  // recompute_modules() table (recompute_modules.hpp); 0 is its default, core_attn.
  uint32_t recompute_modules = 0;
  double bucket_bytes = 25e6;         // gradient-sync fusion buckets (PyTorch DDP's 25 MB)
  // Pipeline sends of a tensor replicated over some SBP dims: each replica sends its 1/r share
  // and the receivers all-gather it over those dims (Megatron-LM's scatter/gather, Narayanan et
  // al. SC'21 §4.1: 1/t of the bytes cross the network, the rest moves over NVLink).
  bool scatter_gather_sends = false;

  int stages() const { return pipeline_dim < 0 ? 1 : mesh_shape[pipeline_dim]; }
  // The mesh shape the SBP signatures are over (mesh_shape without the pipeline dim).
  std::vector<int> sbp_shape() const;
};

}  // namespace autoddl::costmodel
