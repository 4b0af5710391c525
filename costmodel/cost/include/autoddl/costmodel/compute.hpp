// Roofline time of one kernel on a GPU of a cluster preset: max(FLOPs / (peak · eff(FLOPs)),
// bytes / (HBM · hbm_eff)) + launch overhead. eff comes from the preset's size tables (matmul,
// conv; other kinds are memory-bound and run at peak FLOP/s), which calib's fit replaces.
#pragma once
#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/graph.hpp"

namespace autoddl::costmodel {

// `efficiency` > 0 replaces the kind's table lookup (fused attention, whose tables are keyed by
// sequence length rather than FLOPs: see op_kernel_times).
double kernel_time_s(const GpuSpec& gpu, OpKind kind, DType dtype, double flops, double bytes,
                     int kernels = 1, double efficiency = 0);

// The forward and backward kernel times of `op` doing `share` of its work (a micro-batch's piece
// on one device, after its SBP split), priced at its compute dtype: the output's (the input's
// for ops without one), or FP8 for the GEMMs runs_fp8_gemm names. An FP8 GEMM runs at the
// GPU's FP8 peak times the same size-efficiency table, plus the cast of its activation operand
// (forward; once per tensor, by its first FP8 reader) and of the output gradient (backward) to
// FP8 with the amax that sets its scale: one more kernel each, reading 2 and writing 1 byte per
// element (Transformer Engine fuses some of these into LayerNorm and GeLU kernels; charging
// them is the conservative side). Throws
// InputError("--set", "dtype", ...) when the GPU has no FP8 tensor cores. A fused attention
// op runs at the GPU's attention_efficiency_fwd/bwd share of peak at its key length (16-bit:
// Transformer Engine keeps attention out of FP8 by default), or at peak without those tables.
// The fraction of the streaming rate (GpuSpec::hbm_bytes_per_s x hbm_efficiency) at which the
// memory-bound kernels of `kind` move bytes, forward or backward: the GPU's measured norm or loss
// rate for the kinds that name one (OpKindInfo::memory_kernel), else 1. op_kernel_times divides
// the op's bytes by it.
double memory_rate(const GpuSpec& gpu, OpKind kind, bool backward);

struct OpTimes {
  double fwd_s = 0, bwd_s = 0;
};
OpTimes op_kernel_times(const GpuSpec& gpu, const Graph& g, const Op& op, double share);

// The fused-attention efficiency factor for `share` of an attention whose q is (batch, heads,
// seq, head_dim): its 128-row tiles per SM against the tables' reference (GpuSpec); 1 where the
// GPU has no reference.
double attention_occupancy(const GpuSpec& gpu, const Shape& q, double share);

// The forward GEMM of `op` (its `share` of the work) run as `chunks` GEMMs of 1/chunks of it
// each, less the one GEMM: what splitting costs at the efficiency of the smaller size (and the
// launches). 0 for chunks <= 1 or a kind that is not a GEMM.
double gemm_chunking_extra_s(const GpuSpec& gpu, const Graph& g, const Op& op, double share, int chunks);

// Adam step over `local_params` parameters (memory-bound: reads and writes the weights,
// gradients, master weights and both moments), at the GPU's optimizer_rate of the streaming rate.
double optimizer_step_s(const GpuSpec& gpu, double local_params, DType dtype);
// The bytes that step reads and writes: weight + gradient + state read, weight + state written.
double optimizer_step_bytes(double local_params, DType dtype);

// Bytes per parameter of optimizer state: mixed-precision Adam keeps an fp32 master copy and
// two fp32 moments (12 B); fp32 training keeps the two moments (8 B).
double optimizer_bytes_per_param(DType dtype);

// Bytes per parameter of the gradient buffer: 16-bit training accumulates fp32 main gradients
// (Megatron-LM's main_grad buffer; DeepSpeed's bf16 optimizer likewise), 4 B, so mixed-precision
// Adam holds 2 + 4 + 12 = 18 B per parameter (Korthikanti et al. 2022's Figure 1 bars); fp32: 4.
double grad_bytes_per_param(DType dtype);

// The gradient buffer when a 16-bit run reduces its gradients in 16 bits (`reduce_in_16bit`,
// the scheme's grad_reduce_bf16=1): Megatron-Core's DDP allocates its main_grad buffers in the
// reduction's dtype (megatron/core/distributed/distributed_data_parallel.py: grad_dtype =
// torch.float if ddp_config.grad_reduce_in_fp32 else param.dtype), so 2 B, not 4; otherwise as above.
double grad_bytes_per_param(DType dtype, bool reduce_in_16bit);

// Bytes per parameter the data-parallel gradient reduction moves: Megatron-LM's defaults reduce
// bf16 training's fp32 main gradients in fp32 (accumulate_allreduce_grads_in_fp32 is forced on
// for bf16, megatron/training/arguments.py) unless --grad-reduce-in-bf16 (`reduce_in_16bit`),
// and fp16 training's gradients in fp16 (the flag's default is off for fp16); fp32: 4.
double grad_reduce_bytes_per_param(DType dtype, bool reduce_in_16bit);

}  // namespace autoddl::costmodel
