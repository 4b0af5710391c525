// Compute slowed by communication kernels that run beside it on the same GPU. An overlapped
// collective is not free: its kernel occupies streaming multiprocessors that the GEMMs of the
// compute stream would otherwise use. NCCL launches one CTA per channel (src/enqueue.cc,
// `dim3 grid = {nChannels, 1, 1}`), and a cuBLAS GEMM CTA on Hopper/Ampere fills an SM's shared
// memory, so each channel takes one SM away for as long as the collective runs. Transformer
// Engine's userbuffers (tp_overlap) give their communication kernels a configured number of SMs,
// and with set_sm_margin launch the overlapped GEMM on the remaining SMs only
// (transformer_engine/pytorch/csrc/comm_gemm_overlap.h, UbufCommOverlap: `_math_sms =
// set_sm_margin ? multiProcessorCount - num_comm_sm : multiProcessorCount`). The model: a compute
// stream that shares the GPU with a kernel on k of its N SMs for a window w loses w·k/N; a GEMM
// launched on N−k SMs takes N/(N−k) of its time. Needs GpuSpec::sm_count (0 = unknown: no slowdown).
#pragma once
#include <cstdint>
#include <vector>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/graph.hpp"
#include "autoddl/costmodel/scheme.hpp"

namespace autoddl::costmodel {

// Seconds a compute stream loses while a kernel on `sms` of the GPU's `sm_count` SMs runs beside
// it for `window_s`: window_s·sms/sm_count (0 when sm_count is 0).
double sm_contention_s(double window_s, int sms, int sm_count);

// The role Transformer Engine's userbuffers give a tensor-parallel GEMM of a transformer layer
// (transformer_engine/pytorch/module/base.py initialize_ub): the column-parallel GEMMs before the
// layer's first row-parallel one are "qkv", that row-parallel one "proj", the column-parallel
// GEMMs after it "fc1" and later row-parallel ones "fc2". GEMMs outside a layer block, or not
// split over a mesh dim of size > 1, are `none`.
enum class TeGemm : uint8_t { none, qkv, proj, fc1, fc2 };
std::vector<TeGemm> te_gemm_roles(const Graph& graph, const Scheme& scheme);

// How userbuffers run the collective hidden under one GEMM pass: SMs its kernel takes (0: the
// copy engines of ring_exchange) and whether the GEMM runs on the other SMs only (set_sm_margin).
struct UbOverlap {
  int sms = 0;
  bool sm_margin = false;
};
// The forward reduce-scatter of a row-parallel GEMM's output (proj_fprop, fc2_fprop: "pipeline").
UbOverlap ub_fprop_reduce_scatter(TeGemm role);
// The backward reduce-scatter of a column-parallel GEMM's input gradient, hidden under its
// weight-gradient GEMM (qkv_wgrad, fc1_wgrad: "bulk").
UbOverlap ub_wgrad_reduce_scatter(TeGemm role);

// The channels (CTAs) NCCL runs a send/recv with, to a peer on another node: per peer at least
// one per local NIC and enough to carry the GPU's NIC bandwidth at NCCL_P2P_PER_CHANNEL_NET_BW
// (14 GB/s) per channel, rounded up to a power of two (src/graph/paths.cc ncclTopoGetNchannels,
// ncclTopoComputeP2pChannels). 0 without a NIC.
int nccl_p2p_net_channels(const ClusterSpec& cluster);

}  // namespace autoddl::costmodel
