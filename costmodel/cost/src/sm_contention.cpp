// Compute slowed by communication kernels beside it (see sm_contention.hpp).
#include "autoddl/costmodel/sm_contention.hpp"

#include <algorithm>
#include <cmath>

#include "autoddl/costmodel/op_registry.hpp"

namespace autoddl::costmodel {

double sm_contention_s(double window_s, int sms, int sm_count) {
  if (sm_count <= 0 || sms <= 0 || window_s <= 0) return 0;
  return window_s * std::min(sms, sm_count) / sm_count;
}

std::vector<TeGemm> te_gemm_roles(const Graph& graph, const Scheme& scheme) {
  const std::vector<int> sbp_shape = scheme.sbp_shape();
  std::vector<TeGemm> roles(graph.ops.size(), TeGemm::none);
  const std::string* block = nullptr;
  bool after_row = false;  // this block has had its first row-parallel GEMM
  for (size_t i = 0; i < graph.ops.size(); ++i) {
    const Op& op = graph.ops[i];
    if (op.block.empty()) continue;
    if (!block || *block != op.block) {
      block = &op.block;
      after_row = false;
    }
    const OpSignature& sig = scheme.op_sigs[i];
    if (sig.n_in < 2 || !multiplies_weight(graph, op)) continue;
    bool split = false, row_parallel = false;
    for (int d = 0; d < sig.in[1].ndims && d < static_cast<int>(sbp_shape.size()); ++d) {
      if (!sig.in[1].dims[d].is_split() || sbp_shape[d] <= 1) continue;
      split = true;
      if (sig.n_out > 0 && sig.out[0].dims[d].is_partial()) row_parallel = true;
    }
    if (!split) continue;
    if (row_parallel) {
      roles[i] = after_row ? TeGemm::fc2 : TeGemm::proj;
      after_row = true;
    } else {
      roles[i] = after_row ? TeGemm::fc1 : TeGemm::qkv;
    }
  }
  return roles;
}

// NeMo's userbuffers configuration for GPT-3 175B on H100 (tp 4, micro-batch 1, seq 2048), the
// one tp_overlap run validated here: NVIDIA/dgxc-benchmarking v24.11.1
// nemo_megatron/gpt3_175b_hydra.yaml, model.ub_tp_comm_overlap_cfg (also NeMo-Framework-Launcher's
// ub_cfg_h100_h12288_tp4_mbs1_seqlen2048): proj_fprop and fc2_fprop "pipeline" with num_sm 24 and
// 20 and set_sm_margin 1; qkv_wgrad and fc1_wgrad "bulk" with num_sm 8 and 4, set_sm_margin 0;
// qkv_fprop, fc1_fprop, proj_dgrad and fc2_dgrad "ring_exchange", which Transformer Engine runs on
// the copy engines (UbufP2PCommOverlap: use_ce = 1) with the GEMM on every SM. NeMo's other H100
// recipes (nemo/collections/llm/recipes/tp_overlap_configs/userbuffers.py: GPT-3 20B, Llama 70B and
// 405B) give the pipeline reduce-scatters 8-24 SMs with set_sm_margin as well.
UbOverlap ub_fprop_reduce_scatter(TeGemm role) {
  switch (role) {
    case TeGemm::proj: return {24, true};
    case TeGemm::fc2: return {20, true};
    default: return {};
  }
}

UbOverlap ub_wgrad_reduce_scatter(TeGemm role) {
  switch (role) {
    case TeGemm::qkv: return {8, false};
    case TeGemm::fc1: return {4, false};
    default: return {};
  }
}

int nccl_p2p_net_channels(const ClusterSpec& cluster) {
  constexpr double kP2pPerChannelNetBwGBps = 14;  // paths.cc NCCL_PARAM(P2pPerChannelNetBw, ..., 14)
  const double nics_per_gpu = static_cast<double>(cluster.inter.nics_per_node) / std::max(1, cluster.gpus_per_node);
  if (nics_per_gpu <= 0 || cluster.inter.nic_bw_bytes_per_s <= 0) return 0;
  const int net_count = std::max(1, static_cast<int>(std::ceil(nics_per_gpu - 1e-9)));
  const double net_bw_GBps = nics_per_gpu * cluster.inter.nic_bw_bytes_per_s / 1e9;
  const int per_peer = std::max(net_count, static_cast<int>(std::ceil(net_bw_GBps / kP2pPerChannelNetBwGBps - 1e-9)));
  int pow2 = 1;
  while (pow2 < per_peer) pow2 *= 2;  // ncclTopoComputeP2pChannels: pow2Up(p2pnChannelsPerPeer)
  return pow2;
}

}  // namespace autoddl::costmodel
