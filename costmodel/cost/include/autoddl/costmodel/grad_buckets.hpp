// Phase "gradient buckets" of evaluate(): the sync of parameter gradients into their storage
// SBP, once per iteration after the last micro-batch's backward. Consecutive gradients whose
// syncs are the same collectives are fused into buckets of at least Scheme::bucket_bytes, as
// DDP fuses its flat gradient buffer, and each bucket starts when its last gradient is ready
// and the previous bucket is done, overlapping the rest of the backward; what runs past the
// backward is exposed. With a sharded optimizer (ZeRO-1, Megatron's distributed optimizer) the
// gradients are reduce-scattered into the shard a replica updates, and the updated shards are
// all-gathered back to storage after the step, exposed. search's cost tables charge each
// gradient's sync with grad_sync_states, unbucketed.
#pragma once
#include <vector>

#include "autoddl/costmodel/boxing.hpp"
#include "autoddl/costmodel/boxing_plan.hpp"
#include "autoddl/costmodel/comm_tally.hpp"
#include "autoddl/costmodel/eval_frame.hpp"
#include "autoddl/costmodel/iteration_plan.hpp"
#include "autoddl/costmodel/op_compute.hpp"

namespace autoddl::costmodel {

// `storage` with every replicated dim of size > 1 split on the first axis of `shape` that
// divides (after the other dims' splits): the shard ZeRO and Megatron give each replica of a
// flat buffer; dims where no axis divides stay replicated.
NdSbp shard_replicated_dims(NdSbp storage, const std::vector<int>& sbp_shape, const Shape& shape);

// The state of `table` a ZeRO-1 / distributed-optimizer replica updates for a parameter stored
// as `storage`: every replicated dim of size > 1 split on the first axis that divides (as ZeRO
// and Megatron shard the flat buffer); the storage's own state when no axis divides.
int optimizer_shard_state(const BoxingTable& table, const NdSbp& storage, const std::vector<int>& sbp_shape,
                          const Shape& shape);

// A parameter gradient's sync, as states of its tensor's table: `from` (the gradient as the
// reader's backward leaves it) → `to` (the shard the optimizer updates: the storage itself
// unless `shard_optimizer`), then, after the step, `to` → `storage` when they differ.
struct GradSyncStates {
  int from = -1, to = -1, storage = -1;
};
GradSyncStates grad_sync_states(const BoxingTable& table, int grad, int storage, bool shard_optimizer,
                                const std::vector<int>& sbp_shape, const Shape& shape);

// One parameter gradient waiting for sync: its conversion and when it becomes ready.
struct GradSync {
  int tensor = -1;
  int op = -1;             // the reader whose backward produces it
  int from = -1, to = -1;  // states in `table`
  const BoxingTable* table = nullptr;
  double bytes = 0;        // logical gradient bytes
  double ready_s = 0;      // in the last micro-batch's backward of its stage
  // What the reduction moves per byte of `table`'s tensor: 2 for bf16 parameters whose fp32
  // main gradients are reduced in fp32 (grad_reduce_bytes_per_param), 1 otherwise.
  double bytes_scale = 1;
};

// The time of `g`'s conversion at its reduced width, unbucketed.
double grad_sync_time_s(const GradSync& g, const DeviceMesh& mesh);

// Syncs `grads` (in ready order) in buckets over `mesh`, adding the collectives to `tally`, their
// time to `total_s` and each bucket to `planned` (when not null); returns the time the last
// bucket ends past the backward's end (0 when it ends before). With the GPU's `sm_count`, the
// backward is slowed while NCCL's kernels overlap it (one SM per channel, sm_contention.hpp):
// that slowdown goes to `contention_s` (when not null) and moves the backward's end from
// `backward_end_s` by as much.
double sync_buckets(const std::vector<GradSync>& grads, double bucket_bytes, double backward_end_s,
                    const DeviceMesh& mesh, CommTally& tally, double& total_s, std::vector<PlannedBucket>* planned,
                    int sm_count = 0, double* contention_s = nullptr, double* first_bucket_s = nullptr);

struct GradSyncPhase {
  double exposed_s = 0;                 // the most any stage's sync runs past its backward
  // What the slowest stage's backward loses to the SMs its overlapped sync takes, beyond
  // exposed_s: the iteration waits exposed_s + contention_s for the gradient sync.
  double contention_s = 0;
  double total_s = 0;                   // the most sync time of any stage
  std::vector<double> param_gather_s;   // per stage: the all-gather of updated shards (ZeRO-1)
  std::vector<double> param_gather_first_s;  // per stage: its first bucket
  std::vector<CommTally> stage_tally;   // per stage: its collectives, once per iteration
  std::vector<double> op_sync_s;        // per op: its gradients' sync time, unbucketed
};

// The gradients of each stage, ready as the last micro-batch's backward walks the ops in reverse
// (compute and boxing of each op), a parameter read by several ops of a stage summed and synced
// once; records buckets and shard gathers in plan (not null).
GradSyncPhase sync_gradients(const Graph& graph, const Scheme& scheme, const EvalFrame& frame,
                             const std::vector<OpCompute>& compute, const BoxingPlan& boxing, IterationPlan* plan);

}  // namespace autoddl::costmodel
