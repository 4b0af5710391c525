// Phase "compute" of evaluate(): what one device computes of an op in one micro-batch, its
// forward and backward kernels (compute.hpp's roofline) on the micro-batch's share of the work
// after the signature's split, and the forward again before backward when recompute re-runs it
// (Megatron: selective recomputes the attention core, full the transformer layers).
// search's op classes price their choices with op_compute, so the two cannot differ.
#pragma once
#include <vector>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/graph.hpp"
#include "autoddl/costmodel/iteration_plan.hpp"
#include "autoddl/costmodel/scheme.hpp"

namespace autoddl::costmodel {

// What one micro-batch does of an op's whole-batch work (Op::work): 1/m of it when the op
// runs on batch-major data, all of it when not (GPT's position lookup runs per micro-batch).
inline double micro_batch_work_share(const Graph& graph, const Op& op, int micro_batches) {
  const int t = op.outputs.empty() ? op.inputs[0] : op.outputs[0];
  return graph.tensors[t].batched ? 1.0 / micro_batches : 1.0;
}

// Ops whose activations Megatron's selective recompute drops: the attention core (Op::attention_core,
// marked by kind and data flow when the graph is finalized).
bool is_attention_core(const Graph& graph, const Op& op);

// Whether backward re-runs op's forward under `recompute`: selective re-runs the modules
// `modules` names (recompute_modules.hpp; 0: the attention core), full the ops inside blocks
// (transformer layers), never the embeddings, final norm or head.
bool recomputed(const Graph& graph, const Op& op, Recompute recompute, uint32_t modules = 0);

// Seconds of one micro-batch on one device.
struct OpCompute {
  double fwd_s = 0;
  double bwd_s = 0;        // the backward kernels plus recompute_s
  double recompute_s = 0;  // the forward re-run before backward (0 without recompute)
  bool recompute = false;
  // Under tp_overlap (Scheme::overlap_tp_comm), what running this tensor-parallel GEMM as t
  // chunk GEMMs of 1/t of its work costs over one GEMM (t: the mesh dims its weight is split
  // over). Transformer Engine's userbuffers overlap (--tp-comm-overlap) splits the GEMM a
  // sequence-parallel all-gather or reduce-scatter hides under into t steps of a ring exchange
  // or pipeline (te.pytorch's split_overlap_ag/_rs): every forward GEMM, and the backward data
  // GEMM of a row-parallel layer (its output gradient is all-gathered); the column-parallel
  // backward overlaps in bulk, unsplit. plan_boxing charges it once per pass where a
  // collective hides under the GEMM. 0 without tp_overlap or tensor parallelism.
  // The forward extra also holds what the SMs userbuffers' pipelined reduce-scatter takes cost
  // the GEMM: with set_sm_margin it runs on N−k of the GPU's N SMs (sm_contention.hpp).
  double tp_chunk_fwd_extra_s = 0;
  double tp_chunk_bwd_extra_s = 0;
  // Under tp_overlap, the share of the GPU's SMs userbuffers' bulk reduce-scatter takes while it
  // hides under this column-parallel GEMM's backward (its weight-gradient GEMM): plan_boxing
  // charges the hidden time times this share (sm_contention.hpp). 0 elsewhere.
  double tp_bwd_sm_share = 0;
};
OpCompute op_compute(const GpuSpec& gpu, const Graph& graph, const Op& op, const OpSignature& sig,
                     int micro_batches, Recompute recompute, uint32_t recompute_modules = 0);

// op_compute of every op under the scheme's signatures; records each in plan->ops (not null).
std::vector<OpCompute> compute_phase(const GpuSpec& gpu, const Graph& graph, const Scheme& scheme,
                                     const std::vector<int>& op_stage, IterationPlan* plan);

}  // namespace autoddl::costmodel
