// Roofline time of one kernel on a GPU of a cluster preset: max(FLOPs / (peak · eff(FLOPs)),
// bytes / (HBM · hbm_eff)) + launch overhead. eff comes from the preset's size tables (matmul,
// conv; other kinds are memory-bound and run at peak FLOP/s), which calib's fit replaces.
#pragma once
#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/graph.hpp"

namespace autoddl::costmodel {

double kernel_time_s(const GpuSpec& gpu, OpKind kind, DType dtype, double flops, double bytes,
                     int kernels = 1);

// Adam step over `local_params` parameters (memory-bound: reads and writes the weights,
// gradients, master weights and both moments).
double optimizer_step_s(const GpuSpec& gpu, double local_params, DType dtype);
// The bytes that step reads and writes: weight + gradient + state read, weight + state written.
double optimizer_step_bytes(double local_params, DType dtype);

// Bytes per parameter of optimizer state: mixed-precision Adam keeps an fp32 master copy and
// two fp32 moments (12 B); fp32 training keeps the two moments (8 B).
double optimizer_bytes_per_param(DType dtype);

}  // namespace autoddl::costmodel
