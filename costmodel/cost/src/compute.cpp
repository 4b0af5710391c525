// Roofline kernel times (see compute.hpp).
#include "autoddl/costmodel/compute.hpp"
#include "autoddl/costmodel/op_registry.hpp"

#include <algorithm>
#include <cmath>

#include "autoddl/costmodel/error.hpp"

namespace autoddl::costmodel {

double kernel_time_s(const GpuSpec& gpu, OpKind kind, DType dtype, double flops, double bytes,
                     int kernels, double efficiency) {
  if (flops <= 0 && bytes <= 0) return 0;  // a view, or a pass with nothing to compute: no kernel
  double eff = 1;
  const bool gemm = op_kind_info(kind).gemm;
  // The dtype's own table where the GPU has one (FP8 GEMMs, FP32), else the shared one.
  const std::vector<EfficiencyPoint>* table = nullptr;
  if (gemm) {
    table = dtype == DType::fp8 && !gpu.matmul_efficiency_fp8.empty()    ? &gpu.matmul_efficiency_fp8
            : dtype == DType::fp32 && !gpu.matmul_efficiency_fp32.empty() ? &gpu.matmul_efficiency_fp32
                                                                          : &gpu.matmul_efficiency;
  } else if (kind == OpKind::conv2d) {
    table = dtype == DType::fp32 && !gpu.conv_efficiency_fp32.empty() ? &gpu.conv_efficiency_fp32 : &gpu.conv_efficiency;
  }
  if (efficiency > 0) {
    eff = efficiency;
  } else if (table != nullptr && !table->empty()) {
    eff = interpolate_efficiency(*table, flops);
  }
  double peak = gpu.peak_flops(dtype);
  double t_flops = peak > 0 ? flops / (peak * eff) : 0;
  double hbm = gpu.hbm_bytes_per_s * gpu.hbm_efficiency;
  double t_bytes = hbm > 0 ? bytes / hbm : 0;
  return std::max(t_flops, t_bytes) + kernels * gpu.launch_overhead_s;
}

double attention_occupancy(const GpuSpec& gpu, const Shape& q, double share) {
  if (gpu.attention_reference_tiles <= 0 || gpu.sm_count <= 0 || q.size() != 4) return 1;
  const double tiles = static_cast<double>(q[0]) * static_cast<double>(q[1]) *
                       std::ceil(static_cast<double>(q[2]) / 128.0) * share;
  if (tiles <= 0) return 1;
  const double c = gpu.attention_tail_waves, sms = static_cast<double>(gpu.sm_count);
  const double w = tiles / sms, w_ref = gpu.attention_reference_tiles / sms;
  return (w / (w + c)) / (w_ref / (w_ref + c));
}

double memory_rate(const GpuSpec& gpu, OpKind kind, bool backward) {
  double rate = 0;
  switch (op_kind_info(kind).memory_kernel) {
    case MemoryKernel::norm: rate = backward ? gpu.norm_bwd_rate : gpu.norm_fwd_rate; break;
    case MemoryKernel::loss: rate = backward ? gpu.loss_bwd_rate : gpu.loss_fwd_rate; break;
    case MemoryKernel::streaming: break;
  }
  return rate > 0 ? rate : 1;
}

namespace {
// Whether `op` is the first FP8 GEMM to read tensor t: Transformer Engine casts an input once
// (QKV is one GEMM reading one FP8 copy, here three matmuls of the same tensor).
bool first_fp8_reader(const Graph& g, const Op& op, int t) {
  for (int c : g.consumers[t]) {
    if (runs_fp8_gemm(g, g.ops[c])) return &g.ops[c] == &op;
  }
  return true;
}
}  // namespace

OpTimes op_kernel_times(const GpuSpec& gpu, const Graph& g, const Op& op, double share) {
  const bool fp8 = runs_fp8_gemm(g, op);
  const DType dt = fp8 ? DType::fp8 : g.tensors[op.outputs.empty() ? op.inputs[0] : op.outputs[0]].dtype;
  if (dt == DType::fp8 && gpu.peak_flops_fp8 <= 0) {
    throw InputError("--set", "dtype", "fp8 GEMMs need FP8 tensor cores, and " + gpu.name + " has none (no gpu.peak_flops_fp8)");
  }
  double eff_fwd = 0, eff_bwd = 0;  // 0: the kind's own table
  if (op.kind == OpKind::attention) {
    const double seq_k = static_cast<double>(g.tensors[op.inputs[1]].shape[2]);
    const double occupancy = attention_occupancy(gpu, g.tensors[op.inputs[0]].shape, share);
    const std::vector<EfficiencyPoint>& bwd = op.attrs.causal && !gpu.attention_efficiency_bwd_causal.empty()
                                                  ? gpu.attention_efficiency_bwd_causal
                                                  : gpu.attention_efficiency_bwd;
    if (!gpu.attention_efficiency_fwd.empty()) {
      eff_fwd = std::min(1.0, interpolate_efficiency(gpu.attention_efficiency_fwd, seq_k) * occupancy);
    }
    if (!bwd.empty()) eff_bwd = std::min(1.0, interpolate_efficiency(bwd, seq_k) * occupancy);
  }
  OpTimes t;
  // A kind whose kernels move bytes below the streaming rate is priced as moving proportionally
  // more bytes at it (the same time).
  const double fwd_bytes = op.work.fwd_bytes * share / memory_rate(gpu, op.kind, false);
  const double bwd_bytes = op.work.bwd_bytes * share / memory_rate(gpu, op.kind, true);
  t.fwd_s = kernel_time_s(gpu, op.kind, dt, op.work.fwd_flops * share, fwd_bytes, 1, eff_fwd);
  t.bwd_s = kernel_time_s(gpu, op.kind, dt, op.work.bwd_flops * share, bwd_bytes, 2, eff_bwd);
  if (fp8) {
    const double hbm = gpu.hbm_bytes_per_s * gpu.hbm_efficiency;
    const Tensor& a = g.tensors[op.inputs[0]];
    const Tensor& y = g.tensors[op.outputs[0]];
    const double cast_a = 1.5 * static_cast<double>(a.bytes()) * share, cast_dy = 1.5 * static_cast<double>(y.bytes()) * share;
    if (t.fwd_s > 0 && first_fp8_reader(g, op, op.inputs[0])) t.fwd_s += cast_a / hbm + gpu.launch_overhead_s;
    if (t.bwd_s > 0) t.bwd_s += cast_dy / hbm + gpu.launch_overhead_s;
  }
  return t;
}

double gemm_chunking_extra_s(const GpuSpec& gpu, const Graph& g, const Op& op, double share, int chunks) {
  if (chunks <= 1 || !op_kind_info(op.kind).gemm) return 0;
  const DType dt = runs_fp8_gemm(g, op) ? DType::fp8 : g.tensors[op.outputs.empty() ? op.inputs[0] : op.outputs[0]].dtype;
  const double flops = op.work.fwd_flops * share, bytes = op.work.fwd_bytes * share;
  const double whole = kernel_time_s(gpu, op.kind, dt, flops, bytes, 1);
  const double split = chunks * kernel_time_s(gpu, op.kind, dt, flops / chunks, bytes / chunks, 1);
  return std::max(0.0, split - whole);
}

double optimizer_bytes_per_param(DType dtype) { return dtype_bytes(dtype) == 2 ? 12.0 : 8.0; }

double grad_bytes_per_param(DType dtype) { return std::max(4.0, static_cast<double>(dtype_bytes(dtype))); }

double grad_bytes_per_param(DType dtype, bool reduce_in_16bit) {
  return reduce_in_16bit && dtype_bytes(dtype) == 2 ? 2.0 : grad_bytes_per_param(dtype);
}

double grad_reduce_bytes_per_param(DType dtype, bool reduce_in_16bit) {
  if (dtype == DType::bf16 && !reduce_in_16bit) return 4;
  return dtype_bytes(dtype);
}

double optimizer_step_bytes(double local_params, DType dtype) {
  return local_params * (3.0 * dtype_bytes(dtype) + 2 * optimizer_bytes_per_param(dtype));
}

double optimizer_step_s(const GpuSpec& gpu, double local_params, DType dtype) {
  if (local_params <= 0) return 0;
  const double bytes = optimizer_step_bytes(local_params, dtype);
  double hbm = gpu.hbm_bytes_per_s * gpu.hbm_efficiency * (gpu.optimizer_rate > 0 ? gpu.optimizer_rate : 1);
  return (hbm > 0 ? bytes / hbm : 0) + gpu.launch_overhead_s;
}

}  // namespace autoddl::costmodel
