// Phase "boxing plan" of evaluate(): every conversion one micro-batch runs on the way into an
// op, per device. A parameter is gathered from its storage SBP into the used one (ZeRO-3:
// again before backward). An activation is boxed from its producer's output SBP into the
// reader's input SBP once per stage and target SBP, the readers there sharing the result (again
// in backward when the reader's forward is recomputed), and sent once to each other stage that
// reads it; its gradients that share an SBP are summed locally and boxed once into the SBP the
// producer's backward needs. search's cost tables charge their terms with the same rules.
#pragma once
#include <utility>
#include <vector>

#include "autoddl/costmodel/boxing.hpp"
#include "autoddl/costmodel/comm_tally.hpp"
#include "autoddl/costmodel/eval_frame.hpp"
#include "autoddl/costmodel/op_compute.hpp"

namespace autoddl::costmodel {

// Whether a tensor has a gradient (integer tensors and graph inputs have none).
inline bool has_gradient(const Tensor& t) {
  return t.dtype != DType::int32 && t.dtype != DType::int64 && t.role != TensorRole::input;
}

// Whether a tensor's blocks have a fixed order over the mesh (BoxingTable's exact_layout): every
// tensor but a parameter, whose storage and optimizer shard are the framework's to lay out (a
// hierarchical reduce-scatter leaves the shards transposed, and the gather undoes it).
inline bool exact_block_order(const Tensor& t) { return t.role != TensorRole::parameter; }

// Runs of an activation input's forward boxing per micro-batch: again in backward when the
// reader's forward is recomputed (Megatron's checkpointed RowParallelLinear all-reduces again).
inline int forward_boxing_runs(bool reader_recomputed) { return reader_recomputed ? 2 : 1; }

// Runs of a parameter's gather from storage per micro-batch: again before backward when the
// scheme regathers (ZeRO-3 frees the gathered weight after forward).
inline int param_gather_runs(bool regather_in_backward) { return regather_in_backward ? 2 : 1; }

// FSDP's layers (Scheme::fsdp), per op: the index of its layer, a run of consecutive ops with
// one block label on one stage (ops outside a block make layers of their own between blocks).
// FSDP gathers a layer's parameters together and prefetches the next layer's.
std::vector<int> fsdp_layers(const Graph& graph, const std::vector<int>& op_stage);

// One point-to-point send of `bytes` across a stage boundary on the pipeline dim's link.
inline double stage_send_s(const LinkTier& tier, double bytes) { return tier.alpha_s + bytes * tier.beta_s_per_byte; }

// The states of one op input's conversions in its tensor's table (-1: none).
struct InputBoxing {
  const BoxingTable* table = nullptr;  // null for graph inputs
  int from = -1, to = -1;              // forward: storage → use, or producer's out → this in
  int grad = -1;                       // this op's input-gradient state
  int grad_to = -1;                    // activations: the producer's output-gradient state
};

// Seconds of one micro-batch charged to an op: boxing of its inputs (collectives) and
// stage-boundary sends (with scatter/gather's all-gathers on the op's stage).
struct OpBoxing {
  double fwd_s = 0, bwd_s = 0, fwd_send_s = 0, bwd_send_s = 0;
  // Of fwd_s + bwd_s: context parallelism's KV exchange (the keys and values gathered into a
  // fused attention whose queries are sequence-split, re-gathered in backward, and their
  // gradients reduce-scattered), exposed after the p2p ring's overlap (Scheme::overlap_cp_comm).
  double kv_exchange_s = 0;
  double kv_exchange_total_s = 0;  // the same before the ring hides any of it
};

struct BoxingPlan {
  std::vector<OpBoxing> ops;
  std::vector<InputBoxing> inputs;       // per op, kMaxOpInputs each
  std::vector<CommTally> stage_tally;    // per stage: one micro-batch's collectives and sends
  // Per stage: backward work for another stage's op (scatter/gather's all-gather of a received
  // gradient), seconds per micro-batch, counted as send/recv.
  std::vector<double> stage_extra_bwd_s;
  // That work as (producer op, seconds per micro-batch), in the order it was charged: it is
  // reported on the producer's row.
  std::vector<std::pair<int, double>> producer_gather_s;
  const InputBoxing& input(int op, int k) const { return inputs[static_cast<size_t>(op) * kMaxOpInputs + k]; }
};

// Whether op `reader` is a weight GEMM reading tensor t as `layout` (Q, K and V read one gathered
// LayerNorm output): the readers whose data-gradient GEMMs hide t's weight-gradient re-gather
// (PlannedInput::bwd_regather). The simulator launches the re-gather beside the same readers.
bool regather_reader(const Graph& graph, const Scheme& scheme, int reader, int t, const NdSbp& layout);

// Resolves every input's states (throws InputError("scheme", ...) for an SBP that does not
// divide a micro-batch shape), prices the conversions and records them in plan->ops (not null).
BoxingPlan plan_boxing(const Graph& graph, const Scheme& scheme, const EvalFrame& frame,
                       const std::vector<OpCompute>& compute, BoxingCache& cache, IterationPlan* plan);

}  // namespace autoddl::costmodel
