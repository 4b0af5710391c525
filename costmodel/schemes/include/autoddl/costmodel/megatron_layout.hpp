// Which Megatron-LM layout a scheme is, if any. A scheme is a Megatron layout when some
// `megatron:` spec lowers (expert_schemes.hpp) to exactly its mesh, per-op signatures, stage
// partition, parameter storage and options; then a framework that runs Megatron's layouts runs
// it. A searched per-op scheme that no spec reproduces is named by its first differing op, so an
// export can refuse it with one line instead of emitting flags for a different program.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/graph.hpp"
#include "autoddl/costmodel/scheme.hpp"

namespace autoddl::costmodel {

struct MegatronLayout {
  int tp = 1, pp = 1, dp = 1;
  int ep = 1, etp = 1;  // expert model / expert tensor parallel sizes (MoE; etp is tp when ep = 1)
  int cp = 1;           // context parallel size (--context-parallel-size)
  bool cp_ring = true;  // --cp-comm-type p2p (the ring), else all_gather
  int64_t micro_batch_size = 1;  // samples per micro-batch per data-parallel rank (Megatron's --micro-batch-size)
  int64_t global_batch_size = 1;
  int interleave = 1;  // virtual stages per pipeline rank
  // Megatron-Core's --pipeline-model-parallel-layout when the layers are not the even split
  // (pipeline_layout.hpp), "" when they are.
  std::string pipeline_layout;
  bool sequence_parallel = false;
  Recompute recompute = Recompute::none;
  uint32_t recompute_modules = 0;  // --recompute-modules with selective (0: core_attn, the default)
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  bool dist_opt = false, tp_overlap = false, pp_overlap = false, param_overlap = false;
  bool grad_reduce_16bit = false, scatter_gather_sends = true;
  // Megatron-FSDP (--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params), and
  // with hsdp > 1 hybrid sharding over hsdp replicas (--num-distributed-optimizer-instances).
  bool fsdp = false;
  int hsdp = 1;
  std::string spec;  // the megatron: spec that lowers to the scheme
};

struct MegatronMatch {
  std::optional<MegatronLayout> layout;
  std::string why_not;  // when there is no layout: the first difference, one line
  // When there is no layout: the one whose lowering shares the most ops' signatures with the
  // scheme (what `export --approximate` writes), if any lowered at all.
  std::optional<MegatronLayout> nearest;
};

// The Megatron layout `scheme` is on `graph` and `cluster` (the cluster must have the scheme's
// GPUs), or why none is.
MegatronMatch match_megatron_layout(const Graph& graph, const ClusterSpec& cluster, const Scheme& scheme);

}  // namespace autoddl::costmodel
