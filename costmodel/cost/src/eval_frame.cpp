// The frame of evaluate()'s phases (see eval_frame.hpp): the scheme's sizes checked, the
// pipeline dim split off the mesh, micro-batch shapes and bytes, stages per op.
#include "autoddl/costmodel/eval_frame.hpp"
#include "autoddl/costmodel/sm_contention.hpp"

#include <algorithm>

#include "autoddl/costmodel/error.hpp"

namespace autoddl::costmodel {

void scheme_error(const std::string& field, const std::string& reason) { throw InputError("scheme", field, reason); }

PipelineSplit split_pipeline_dim(const DeviceMesh& mesh, int pipeline_dim) {
  PipelineSplit p;
  p.sbp_mesh.calibration = mesh.calibration;
  for (int d = 0; d < mesh.ndims(); ++d) {
    if (d == pipeline_dim) p.tier = mesh.dims[d].tier;
    else p.sbp_mesh.dims.push_back(mesh.dims[d]);
  }
  if (p.sbp_mesh.dims.empty()) p.sbp_mesh.dims.push_back(MeshDim{});  // size-1 SBP dim
  return p;
}

Shape micro_batch_shape(const Tensor& t, int micro_batches) {
  Shape s = t.shape;
  if (t.role != TensorRole::parameter && t.batched && !s.empty() && micro_batches > 1 &&
      s[0] % micro_batches == 0) {
    s[0] /= micro_batches;
  }
  return s;
}

double micro_batch_bytes(const Tensor& t, const Shape& shape_mb) {
  int64_t e = 1;
  for (int64_t x : shape_mb) e *= x;
  return static_cast<double>(e * dtype_bytes(t.dtype));
}

DType training_dtype(const Graph& graph) {
  for (const Tensor& t : graph.tensors) {
    if (t.role == TensorRole::parameter) return t.dtype;
  }
  return DType::fp32;
}

EvalFrame make_eval_frame(const Graph& graph, const ClusterSpec& cluster, const Scheme& scheme) {
  const int n_ops = static_cast<int>(graph.ops.size());
  const int n_tensors = static_cast<int>(graph.tensors.size());
  if (static_cast<int>(scheme.op_sigs.size()) != n_ops) {
    scheme_error("op_sigs", "has " + std::to_string(scheme.op_sigs.size()) + " signatures for " +
                                std::to_string(n_ops) + " ops");
  }
  if (static_cast<int>(scheme.param_storage.size()) != n_tensors) {
    scheme_error("param_storage", "has " + std::to_string(scheme.param_storage.size()) +
                                      " entries for " + std::to_string(n_tensors) + " tensors");
  }
  const int m = scheme.micro_batches;
  if (m < 1 || graph.batch % m != 0) {
    scheme_error("micro_batches", std::to_string(m) + " does not divide the batch " +
                                      std::to_string(graph.batch));
  }
  EvalFrame f;
  f.mesh = make_mesh(cluster, scheme.mesh_shape, "scheme mesh");
  f.split = split_pipeline_dim(f.mesh, scheme.pipeline_dim);
  f.sbp_shape = f.split.sbp_mesh.shape();
  f.stages = scheme.stages();
  f.virtual_stages = std::max(1, scheme.virtual_stages);
  f.overlap_p2p_comm = scheme.overlap_p2p_comm;
  f.overlap_param_gather = scheme.overlap_param_gather;
  f.sm_count = cluster.gpu.sm_count;
  if (scheme.pipeline_dim >= 0 && scheme.pipeline_dim < static_cast<int>(f.mesh.dims.size())) {
    const MeshDim& pd = f.mesh.dims[scheme.pipeline_dim];
    if (pd.size > 1 && pd.ranks_per_node == 1) f.p2p_sms = nccl_p2p_net_channels(cluster);
  }
  f.micro_batches = m;
  if (!scheme.op_chunk.empty() && static_cast<int>(scheme.op_chunk.size()) != n_ops) {
    scheme_error("op_chunk", "needs one chunk per op");
  }
  const int nd = f.sbp_dims();
  f.op_stage.resize(n_ops);
  for (int i = 0; i < n_ops; ++i) {
    const Op& op = graph.ops[i];
    const OpSignature& sig = scheme.op_sigs[i];
    if (sig.n_in != static_cast<int>(op.inputs.size()) || sig.n_out != static_cast<int>(op.outputs.size())) {
      scheme_error("op " + op.name, "signature has the wrong number of operands");
    }
    for (int k = 0; k < sig.n_in; ++k) {
      if (sig.in[k].ndims != nd) scheme_error("op " + op.name, "signature is not over the " + std::to_string(nd) + " SBP mesh dims");
    }
    f.op_stage[i] = scheme.op_chunk.empty() ? 0 : scheme.op_chunk[i] % f.stages;
  }
  f.shape_mb.resize(n_tensors);
  f.bytes_mb.resize(n_tensors);
  for (int t = 0; t < n_tensors; ++t) {
    f.shape_mb[t] = micro_batch_shape(graph.tensors[t], m);
    f.bytes_mb[t] = micro_batch_bytes(graph.tensors[t], f.shape_mb[t]);
  }
  f.out_slot.assign(n_tensors, -1);
  for (const Op& op : graph.ops) {
    for (size_t o = 0; o < op.outputs.size(); ++o) f.out_slot[op.outputs[o]] = static_cast<int>(o);
  }
  f.train_dtype = training_dtype(graph);
  return f;
}

void start_plan(IterationPlan& plan, const EvalFrame& f, const Graph& graph, const Scheme& scheme) {
  const int S = f.stages;
  plan = IterationPlan{};
  plan.mesh = f.mesh;
  plan.pipeline_dim = scheme.pipeline_dim;
  plan.sbp_mesh = f.split.sbp_mesh;
  for (int d = 0, k = 0; d < f.mesh.ndims(); ++d) plan.sbp_dim_of_mesh.push_back(d == scheme.pipeline_dim ? -1 : k++);
  plan.stages = S;
  plan.micro_batches = f.micro_batches;
  plan.virtual_stages = f.virtual_stages;
  plan.schedule = scheme.schedule;
  plan.fsdp = scheme.fsdp;
  plan.pipeline_tier = f.split.tier;
  plan.ops.resize(graph.ops.size());
  plan.buckets.resize(S);
  plan.param_gathers.resize(S);
  plan.optimizer_s.assign(S, 0);
  plan.optimizer_params.assign(S, 0);
  plan.train_dtype = f.train_dtype;
}

}  // namespace autoddl::costmodel
