// IterationPlan: what evaluate() priced, item by item, for a consumer that replays the
// iteration instead of summing it (the simulator's lowering in sim/). It holds the per-op
// compute of one micro-batch, every boxing path as its collective steps, the stage-boundary
// sends, the gradient-sync buckets as evaluate fused them, and the optimizer step per stage,
// so a replay executes exactly the work the analytical model charged and copies no formula.
#pragma once
#include <vector>

#include "autoddl/costmodel/boxing.hpp"
#include "autoddl/costmodel/collective.hpp"
#include "autoddl/costmodel/mesh.hpp"
#include "autoddl/costmodel/scheme.hpp"

namespace autoddl::costmodel {

enum class InputRole : uint8_t { activation, parameter, graph_input };

// One input of an op, per micro-batch and device. Activations: `fwd` converts the producer's
// output SBP into this op's input SBP, `bwd` converts this op's input gradient into the SBP the
// producer's backward needs (empty when another reader of the tensor is charged: gradients
// that share an SBP are summed locally and boxed once). Parameters: `fwd` gathers the stored
// SBP into the used one (ZeRO-3), `bwd` gathers again before backward (regather_in_backward).
// Graph inputs cost nothing. Steps are over the SBP mesh (IterationPlan::sbp_mesh).
struct PlannedInput {
  InputRole role = InputRole::graph_input;
  int tensor = -1;
  int producer = -1;  // activations: the op that writes the tensor
  std::vector<BoxingStep> fwd, bwd;
  // The nd-SBPs each path visits (BoxingTable::route), from its source to its target with the
  // local steps (slices, zero-fills) the steps above omit; empty when the path is.
  std::vector<NdSbp> fwd_route, bwd_route;
  // The producer sits on another pipeline stage: each device sends its local piece
  // (fwd: producer's output SBP; bwd: this op's input-gradient SBP, when charged).
  bool cross_stage = false;
  double fwd_send_bytes = 0, fwd_send_s = 0;
  double bwd_send_bytes = 0, bwd_send_s = 0;
  bool bwd_send = false;
  // Scheme::scatter_gather_sends: the all-gathers that rebuild a scattered send on the
  // receiving stage (fwd: this op's stage; bwd: the producer's).
  std::vector<BoxingStep> fwd_send_gather, bwd_send_gather;
  // A weight GEMM's input gathered from a smaller layout is gathered again in backward for the
  // weight gradient (boxing_plan.cpp), beside the data-gradient GEMMs: its steps, and the part
  // that outlasts those GEMMs, which is all the stage time holds of it.
  std::vector<BoxingStep> bwd_regather;
  double bwd_regather_exposed_s = 0;
  // tp_overlap (Scheme::overlap_tp_comm): the op whose GEMM pass (forward for `fwd`, backward
  // for `bwd`) the path hides under, -1 when it is on the critical path. A replay runs it beside
  // that GEMM: the consumer's for an all-gather into it, the producer's for a reduce-scatter of
  // its output (and their backward mirrors).
  int fwd_hidden_under = -1, bwd_hidden_under = -1;
};

struct PlannedOp {
  int stage = 0;
  int chunk = 0;  // the scheme's op_chunk (stage = chunk % stages), 0 without a pipeline
  // Seconds of one micro-batch on one device (kernel_time_s); bwd_s excludes recompute_s,
  // the forward recomputed before backward (recompute full, or selective on attention).
  double fwd_s = 0, bwd_s = 0, recompute_s = 0;
  bool recompute = false;  // the forward is recomputed before backward (recompute_s charged)
  // tp_overlap, when collectives hide under this GEMM's pass: seconds of collectives hidden
  // under it, and what evaluate() charges after it (the chunked GEMM's extra time and the SMs
  // userbuffers' kernels take, OpCompute::tp_chunk_*_extra_s and tp_bwd_sm_share).
  double tp_fwd_hidden_s = 0, tp_bwd_hidden_s = 0;
  double tp_fwd_extra_s = 0, tp_bwd_extra_s = 0;
  // FSDP (Scheme::fsdp): what the SMs of this op's prefetched parameter gathers cost the
  // neighbouring layer's compute they hide under, forward and backward (sm_contention.hpp),
  // charged with the op's exposed gather; a replay adds it to the op's compute.
  double fsdp_fwd_sm_s = 0, fsdp_bwd_sm_s = 0;
  std::vector<PlannedInput> inputs;  // one per op input, in order
};

// A parameter gradient in a bucket: the tensor, the op whose backward (in the last
// micro-batch) makes it ready, its logical bytes, and when it is ready (from the start of
// that backward, as evaluate() overlaps the sync).
struct PlannedGradient {
  int tensor = -1;
  int op = -1;
  double bytes = 0;
  double ready_s = 0;
  std::vector<NdSbp> route;  // the nd-SBPs its sync visits: gradient SBP first, storage last
};

// Gradients fused into one sync (DDP buckets): their paths have the same steps (mesh dims and
// kinds), so the bucket runs those steps once on the summed bytes (time_s of the sum).
struct PlannedBucket {
  std::vector<PlannedGradient> grads;
  std::vector<BoxingStep> steps;
  double overlap_end_s = 0;  // the end of the backward the bucket overlaps (0 for gathers)
};

struct IterationPlan {
  DeviceMesh mesh;           // the whole mesh, pipeline dim included
  int pipeline_dim = -1;     // -1: no pipeline
  DeviceMesh sbp_mesh;       // the mesh without the pipeline dim (one size-1 dim if empty)
  std::vector<int> sbp_dim_of_mesh;  // per mesh dim: its SBP dim, -1 for the pipeline dim
  int stages = 1, micro_batches = 1, virtual_stages = 1;
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  // Scheme::fsdp: each layer's (fsdp_layers) parameter gathers are prefetched under its
  // neighbour's compute, and every micro-batch's gradients are reduce-scattered (`buckets`,
  // once per micro-batch).
  bool fsdp = false;
  LinkTier pipeline_tier;    // α-β of a stage-boundary send
  std::vector<PlannedOp> ops;                      // per graph op
  std::vector<std::vector<PlannedBucket>> buckets;  // per stage, in the order they sync
  // Per stage: ZeRO-1's all-gathers of the updated parameter shards, after the optimizer step.
  std::vector<std::vector<PlannedBucket>> param_gathers;
  std::vector<double> optimizer_s;                 // per stage: the optimizer step
  // What the SMs of the gradient sync's NCCL kernels cost the backward they overlap
  // (GradSyncPhase::contention_s, sm_contention.hpp); the simulator does not run it.
  double grad_sync_contention_s = 0;
  // pp_overlap (Scheme::overlap_p2p_comm), per stage and micro-batch: seconds of its sends that
  // hide under its compute, and what NCCL's send/recv CTAs cost the forward meanwhile
  // (sm_contention.hpp). Empty without pp_overlap.
  std::vector<double> p2p_hidden_s, p2p_contention_s;
  std::vector<double> optimizer_params;            // per stage: local parameters it updates
  DType train_dtype = DType::fp32;                 // the parameters' dtype (the optimizer's)
};

}  // namespace autoddl::costmodel
