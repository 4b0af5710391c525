// Phase "compute" of evaluate() (see op_compute.hpp): kernel times per op and micro-batch,
// with the recomputed forward charged to backward.
#include "autoddl/costmodel/op_compute.hpp"

#include "autoddl/costmodel/compute.hpp"
#include "autoddl/costmodel/op_registry.hpp"
#include "autoddl/costmodel/recompute_modules.hpp"
#include "autoddl/costmodel/sm_contention.hpp"

namespace autoddl::costmodel {

bool is_attention_core(const Graph&, const Op& op) { return op.attention_core; }

bool recomputed(const Graph& graph, const Op& op, Recompute recompute, uint32_t modules) {
  switch (recompute) {
    case Recompute::none: return false;
    case Recompute::selective: return modules ? in_recompute_module(graph, op, modules) : is_attention_core(graph, op);
    case Recompute::full: return !op.block.empty();  // Megatron checkpoints transformer layers only
  }
  return false;
}

OpCompute op_compute(const GpuSpec& gpu, const Graph& graph, const Op& op, const OpSignature& sig,
                     int micro_batches, Recompute recompute, uint32_t recompute_modules) {
  const double share = micro_batch_work_share(graph, op, micro_batches) / sig.compute_split;
  const OpTimes kt = op_kernel_times(gpu, graph, op, share);
  OpCompute c;
  c.fwd_s = kt.fwd_s;
  c.bwd_s = kt.bwd_s;
  c.recompute = recomputed(graph, op, recompute, recompute_modules);
  if (c.recompute) {
    c.recompute_s = c.fwd_s;
    c.bwd_s += c.fwd_s;
  }
  return c;
}

namespace {

// tp_overlap's chunked GEMMs (OpCompute::tp_chunk_*): t = the mesh size over the dims that split
// the weight (input 1); row-parallel (output partial on such a dim) also splits its backward
// data GEMM.
void tp_chunk_extra(const GpuSpec& gpu, const Graph& graph, const Op& op, const OpSignature& sig,
                    const std::vector<int>& sbp_shape, int micro_batches, TeGemm role, OpCompute& c) {
  if (sig.n_in < 2 || !multiplies_weight(graph, op)) return;
  int chunks = 1;
  bool row_parallel = false;
  for (int d = 0; d < sig.in[1].ndims && d < static_cast<int>(sbp_shape.size()); ++d) {
    if (!sig.in[1].dims[d].is_split()) continue;
    chunks *= sbp_shape[d];
    if (sig.n_out > 0 && sig.out[0].dims[d].is_partial()) row_parallel = true;
  }
  const double share = micro_batch_work_share(graph, op, micro_batches) / sig.compute_split;
  c.tp_chunk_fwd_extra_s = gemm_chunking_extra_s(gpu, graph, op, share, chunks);
  if (row_parallel) c.tp_chunk_bwd_extra_s = c.tp_chunk_fwd_extra_s;
  // SMs the userbuffers kernels take (sm_contention.hpp): the pipelined forward reduce-scatter's
  // GEMM chunks run on the SMs it leaves (set_sm_margin); the bulk backward reduce-scatter shares
  // the SMs with the weight-gradient GEMM while it runs.
  const UbOverlap rs = ub_fprop_reduce_scatter(role);
  if (rs.sm_margin && gpu.sm_count > rs.sms) {
    c.tp_chunk_fwd_extra_s += (c.fwd_s + c.tp_chunk_fwd_extra_s) * rs.sms / (gpu.sm_count - rs.sms);
  }
  const UbOverlap wgrad = ub_wgrad_reduce_scatter(role);
  c.tp_bwd_sm_share = sm_contention_s(1.0, wgrad.sms, gpu.sm_count);  // 0 when sm_count is unknown
}

}  // namespace

std::vector<OpCompute> compute_phase(const GpuSpec& gpu, const Graph& graph, const Scheme& scheme,
                                     const std::vector<int>& op_stage, IterationPlan* plan) {
  const int n_ops = static_cast<int>(graph.ops.size());
  std::vector<OpCompute> out(n_ops);
  const std::vector<int> sbp_shape = scheme.overlap_tp_comm ? scheme.sbp_shape() : std::vector<int>{};
  const std::vector<TeGemm> roles = scheme.overlap_tp_comm ? te_gemm_roles(graph, scheme) : std::vector<TeGemm>{};
  for (int i = 0; i < n_ops; ++i) {
    const OpSignature& sig = scheme.op_sigs[i];
    out[i] = op_compute(gpu, graph, graph.ops[i], sig, scheme.micro_batches, scheme.recompute, scheme.recompute_modules);
    if (scheme.overlap_tp_comm) {
      tp_chunk_extra(gpu, graph, graph.ops[i], sig, sbp_shape, scheme.micro_batches, roles[i], out[i]);
    }
    if (!plan) continue;
    PlannedOp& p = plan->ops[i];
    p.stage = op_stage[i];
    p.chunk = scheme.op_chunk.empty() ? 0 : scheme.op_chunk[i];
    p.fwd_s = out[i].fwd_s;
    p.bwd_s = out[i].bwd_s - out[i].recompute_s;
    p.recompute_s = out[i].recompute_s;
    p.recompute = out[i].recompute;
    p.inputs.resize(sig.n_in);
  }
  return out;
}

}  // namespace autoddl::costmodel
