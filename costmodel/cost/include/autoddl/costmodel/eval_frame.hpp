// The frame every phase of evaluate() prices in (cost_model.hpp): the scheme checked against
// the graph, the mesh split into its pipeline dim and the SBP mesh, each op's stage, every
// tensor's micro-batch shape and bytes, and the training dtype. search's cost tables build their
// SBP mesh, micro-batch bytes and dtype with the same functions.
#pragma once
#include <string>
#include <vector>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/graph.hpp"
#include "autoddl/costmodel/iteration_plan.hpp"
#include "autoddl/costmodel/mesh.hpp"
#include "autoddl/costmodel/scheme.hpp"

namespace autoddl::costmodel {

// A mesh without its pipeline dim: what SBP signatures are placed on, and the stage links.
struct PipelineSplit {
  DeviceMesh sbp_mesh;  // the other dims, calibrated as the mesh; one size-1 dim if none is left
  LinkTier tier;        // α-β of a stage-boundary send (zero without a pipeline dim)
};
PipelineSplit split_pipeline_dim(const DeviceMesh& mesh, int pipeline_dim);

// The shape a tensor has in one micro-batch: batch-major (Tensor::batched) activations and
// inputs have axis 0 divided by m; parameters and batch-free tensors (positions) keep theirs.
Shape micro_batch_shape(const Tensor& t, int micro_batches);
// The bytes of `t` at its micro-batch shape.
double micro_batch_bytes(const Tensor& t, const Shape& shape_mb);

// The training dtype: that of the parameters (fp32 if there are none); the optimizer's.
DType training_dtype(const Graph& graph);

struct EvalFrame {
  DeviceMesh mesh;                 // the whole mesh, pipeline dim included
  PipelineSplit split;
  std::vector<int> sbp_shape;      // split.sbp_mesh.shape()
  int stages = 1, virtual_stages = 1, micro_batches = 1;
  bool overlap_p2p_comm = false;  // Scheme::overlap_p2p_comm (the timeline hides pipeline sends)
  bool overlap_param_gather = false;  // Scheme::overlap_param_gather (the timeline hides the shard gather)
  int sm_count = 0;                // GpuSpec::sm_count (0: no SM contention is priced)
  // SMs (NCCL channels) a pipeline send/recv takes while it overlaps compute: NCCL's channels per
  // network peer when every stage boundary crosses nodes; 0 otherwise (not priced).
  int p2p_sms = 0;
  std::vector<int> op_stage;       // per op: op_chunk % stages (0 without chunks)
  std::vector<Shape> shape_mb;     // per tensor
  std::vector<double> bytes_mb;    // per tensor
  std::vector<int> out_slot;       // per tensor: its output slot in its producer, -1 if none
  DType train_dtype = DType::fp32;
  int sbp_dims() const { return static_cast<int>(sbp_shape.size()); }
};

// Checks the scheme's sizes against the graph (one signature per op with its operand counts
// over the SBP dims, storage per tensor, micro-batches dividing the batch, a chunk per op)
// and builds the frame. Throws InputError("scheme", field, reason).
EvalFrame make_eval_frame(const Graph& graph, const ClusterSpec& cluster, const Scheme& scheme);

// Resets `plan` to the frame's mesh, stages and schedule with one empty row per op and stage.
void start_plan(IterationPlan& plan, const EvalFrame& frame, const Graph& graph, const Scheme& scheme);

[[noreturn]] void scheme_error(const std::string& field, const std::string& reason);

}  // namespace autoddl::costmodel
