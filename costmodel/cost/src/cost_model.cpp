// One iteration of a scheme under the analytical model (see cost_model.hpp), composed of its
// phases, each in its own file: the frame (eval_frame.hpp), compute (op_compute.hpp), the
// boxing plan (boxing_plan.hpp), gradient buckets (grad_buckets.hpp), memory (stage_memory.hpp)
// and the timeline (timeline.hpp). The walk is O(ops + edges) with boxing tables shared per
// tensor shape, so evaluating a 96-layer GPT takes milliseconds; search's cost tables price
// their terms with the same phase functions.
#include "autoddl/costmodel/cost_model.hpp"

#include "autoddl/costmodel/boxing_plan.hpp"
#include "autoddl/costmodel/compute.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/stage_memory.hpp"
#include "autoddl/costmodel/timeline.hpp"

#include <optional>

namespace autoddl::costmodel {

std::string signature_string(const Graph& graph, const Op& op, const OpSignature& sig) {
  std::string s;
  for (int i = 0; i < sig.n_in; ++i) {
    s += (i ? " " : "") + graph.tensors[op.inputs[i]].name + ":" + to_string(sig.in[i]);
  }
  s += " ->";
  for (int o = 0; o < sig.n_out; ++o) s += " " + to_string(sig.out[o]);
  return s;
}

CostReport evaluate(const Graph& graph, const ClusterSpec& cluster, const Scheme& scheme) {
  return evaluate(graph, cluster, scheme, nullptr);
}

namespace {
// The one feasibility rule of memory_fit() and evaluate(): the peak fits in the GPU's usable memory.
bool fits_in_memory(double peak_bytes, const GpuSpec& gpu) { return peak_bytes <= usable_memory_bytes(gpu); }
}  // namespace

MemoryFit memory_fit(const Graph& graph, const ClusterSpec& cluster, const Scheme& scheme) {
  const double peak = stage_memory(graph, scheme, make_eval_frame(graph, cluster, scheme)).peak_bytes;
  return {peak, fits_in_memory(peak, cluster.gpu)};
}

BoxingCache& EvalCache::boxing(const ClusterSpec& cluster, const Scheme& scheme, const DeviceMesh& sbp_mesh) {
  if (cluster_ == nullptr) cluster_ = &cluster;
  AUTODDL_CHECK(cluster_ == &cluster) << "an EvalCache serves one cluster";
  std::unique_ptr<BoxingCache>& c = by_mesh_[{scheme.mesh_shape, scheme.pipeline_dim}];
  if (!c) c = std::make_unique<BoxingCache>(sbp_mesh);
  return *c;
}

namespace {

// evaluate()'s phases with the boxing tables of `cache` (null: its own, for this call alone).
CostReport evaluate_with(const Graph& graph, const ClusterSpec& cluster, const Scheme& scheme, IterationPlan* plan,
                         EvalCache* shared) {
  const EvalFrame f = make_eval_frame(graph, cluster, scheme);
  if (plan) start_plan(*plan, f, graph, scheme);
  const std::vector<OpCompute> compute = compute_phase(cluster.gpu, graph, scheme, f.op_stage, plan);
  // The SBP mesh is a function of the cluster, the mesh shape and the pipeline dim
  // (split_pipeline_dim), which key the shared tables.
  std::optional<BoxingCache> own;
  if (!shared) own.emplace(f.split.sbp_mesh);
  BoxingCache& cache = shared ? shared->boxing(cluster, scheme, f.split.sbp_mesh) : *own;
  const BoxingPlan boxing = plan_boxing(graph, scheme, f, compute, cache, plan);
  const GradSyncPhase sync = sync_gradients(graph, scheme, f, compute, boxing, plan);
  const MemoryPhase memory = stage_memory(graph, scheme, f);

  const int m = f.micro_batches;
  CostReport r;
  r.model = graph.name;
  r.cluster = cluster.name;
  r.scheme = scheme.name;
  r.mesh = f.mesh.shape_string();
  r.devices = f.mesh.devices();
  r.stages = f.stages;
  r.micro_batches = m;
  r.params = static_cast<double>(graph.parameter_count());
  // Per op and iteration; a producer's row also carries the gathers it runs for a later stage's
  // scatter/gather send (producers precede their readers).
  r.per_op.resize(graph.ops.size());
  for (size_t i = 0; i < graph.ops.size(); ++i) {
    const OpCompute& c = compute[i];
    const OpBoxing& b = boxing.ops[i];
    r.per_op[i] = {graph.ops[i].name, signature_string(graph, graph.ops[i], scheme.op_sigs[i]), f.op_stage[i],
                   m * (c.fwd_s + c.bwd_s), m * (b.fwd_s + b.bwd_s + b.fwd_send_s + b.bwd_send_s), 0};
  }
  for (const auto& [op, s] : boxing.producer_gather_s) r.per_op[op].boxing_s += s;
  for (size_t i = 0; i < graph.ops.size(); ++i) r.per_op[i].grad_sync_s = sync.op_sync_s[i];

  r.grad_sync_exposed_s = sync.exposed_s;
  r.grad_sync_s = sync.total_s;
  r.peak_memory_bytes = memory.peak_bytes;
  r.param_memory_bytes = memory.param_bytes;
  r.activation_memory_bytes = memory.activation_bytes;
  auto width_name = [](double bytes) { return bytes == 4 ? "fp32" : "16-bit"; };
  r.grad_dtype = width_name(grad_bytes_per_param(f.train_dtype, scheme.grad_reduce_16bit));
  r.grad_reduce_dtype = grad_reduce_bytes_per_param(f.train_dtype, scheme.grad_reduce_16bit) == 4
                            ? "fp32"
                            : std::string(dtype_name(f.train_dtype));
  r.memory_capacity_bytes = usable_memory_bytes(cluster.gpu);
  r.memory_reserve_bytes = cluster.gpu.memory_reserve_bytes;
  if (!fits_in_memory(r.peak_memory_bytes, cluster.gpu)) {
    r.feasible = false;
    r.infeasible_reason = memory_infeasible_reason(memory, cluster.gpu, f.stages);
  }

  iteration_timeline(cluster.gpu, f, scheme.schedule, compute, boxing, sync, memory.optimizer_params, r, plan);
  r.model_flops_per_iteration = 3 * graph.model_forward_flops(FlopsConvention::megatron);
  r.model_flops_causal_per_iteration = 3 * graph.model_forward_flops(FlopsConvention::causal);
  if (r.iteration_s > 0) {
    r.samples_per_s = graph.batch / r.iteration_s;
    r.model_tflops_per_gpu = r.model_flops_per_iteration / r.iteration_s / r.devices / 1e12;
  }
  return r;
}

}  // namespace

CostReport evaluate(const Graph& graph, const ClusterSpec& cluster, const Scheme& scheme, IterationPlan* plan) {
  return evaluate_with(graph, cluster, scheme, plan, nullptr);
}

CostReport evaluate(const Graph& graph, const ClusterSpec& cluster, const Scheme& scheme, EvalCache& cache) {
  return evaluate_with(graph, cluster, scheme, nullptr, &cache);
}

}  // namespace autoddl::costmodel
