// Phase "memory" of evaluate() (see stage_memory.hpp): parameters, gradients and optimizer
// state by storage, the transient gather of ZeRO-3 weights, and saved activations in flight.
#include "autoddl/costmodel/stage_memory.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

#include "autoddl/costmodel/activation_memory.hpp"
#include "autoddl/costmodel/boxing_plan.hpp"
#include "autoddl/costmodel/compute.hpp"

namespace autoddl::costmodel {

double in_flight_micro_batches(int stage, int stages, int micro_batches, PipelineSchedule schedule,
                               int virtual_stages) {
  if (stages <= 1) return 1;
  if (schedule == PipelineSchedule::gpipe) return micro_batches;
  const int S = stages, v = virtual_stages;
  return std::min<double>(micro_batches, S - stage) * (v > 1 ? 1.0 + (S - 1.0) / (S * v) : 1.0);
}

ParamMemory param_memory(const Tensor& t, const NdSbp& storage, const std::vector<int>& sbp_shape,
                         bool shard_optimizer, double optimizer_bytes_per_param, double grad_bytes_per_param) {
  const double store_local = local_bytes(storage, sbp_shape.data(), static_cast<double>(t.bytes()));
  const double elems = store_local / dtype_bytes(t.dtype);
  // ZeRO-1: each replica of a parameter updates only its share of the optimizer state, so
  // the state is split over every dim where the parameter is stored broadcast.
  double opt_split = 1;
  if (shard_optimizer) {
    for (int d = 0; d < storage.ndims; ++d) {
      if (storage.dims[d].is_broadcast()) opt_split *= sbp_shape[d];
    }
  }
  return {store_local + elems * grad_bytes_per_param + elems * optimizer_bytes_per_param / opt_split,
          elems / opt_split};
}

int keeping_stage(const Graph& graph, const std::vector<int>& op_stage, int t, int producer_stage) {
  int first_reader = -1;
  for (int c : graph.consumers[t]) {
    if (op_stage[c] == producer_stage) return producer_stage;
    if (first_reader < 0 || op_stage[c] < first_reader) first_reader = op_stage[c];
  }
  return first_reader < 0 ? producer_stage : first_reader;
}

namespace {

// Local bytes of output o of op i as backward keeps it: at its producer's SBP, or at the smaller
// SBP an op that keeps it reads it in. A partial sum reduce-scattered into a LayerNorm (a row-
// parallel output added to the residual stream under sequence parallelism, when no dropout
// forces the reduction first) is kept as the norm's sequence shard, as Megatron-LM keeps it
// (reduce-scatter, then the residual add); a shard gathered for a GEMM stays kept as the shard
// (re-gathered in backward).
double kept_local_bytes(const Graph& graph, const Scheme& scheme, const EvalFrame& f, const ActivationFactors& af,
                        int i, int o) {
  const int t = graph.ops[i].outputs[o];
  double local = local_bytes(scheme.op_sigs[i].out[o], f.sbp_shape.data(), f.bytes_mb[t]);
  for (int c : graph.consumers[t]) {
    const Op& reader = graph.ops[c];
    for (size_t k = 0; k < reader.inputs.size(); ++k) {
      if (reader.inputs[k] != t || !(af.saves_input[c] & (1u << k))) continue;
      local = std::min(local, local_bytes(scheme.op_sigs[c].in[k], f.sbp_shape.data(), f.bytes_mb[t]));
    }
  }
  return local;
}
}  // namespace

MemoryPhase stage_memory(const Graph& graph, const Scheme& scheme, const EvalFrame& f) {
  const int n_ops = static_cast<int>(graph.ops.size());
  const int S = f.stages;
  const double opt_bpp = optimizer_bytes_per_param(f.train_dtype), grad_bpp = grad_bytes_per_param(f.train_dtype, scheme.grad_reduce_16bit);
  MemoryPhase out;
  out.optimizer_params.assign(S, 0);
  std::vector<double> param_mem(S, 0), act_mem(S, 0), transient(S, 0);
  std::vector<int> param_stage(graph.tensors.size(), -1);
  // FSDP (Scheme::fsdp): the gathered parameters and their gradients of each layer (fsdp_layers).
  const std::vector<int> layer = scheme.fsdp ? fsdp_layers(graph, f.op_stage) : std::vector<int>{};
  std::vector<double> layer_gathered, layer_grads;
  std::vector<int> layer_stage;
  for (int i = 0; i < n_ops; ++i) {
    const Op& op = graph.ops[i];
    const OpSignature& sig = scheme.op_sigs[i];
    const int s = f.op_stage[i];
    double gathered = 0, gathered_grads = 0;
    for (int k = 0; k < sig.n_in; ++k) {
      const int t = op.inputs[k];
      const Tensor& tensor = graph.tensors[t];
      if (tensor.role != TensorRole::parameter) continue;
      const NdSbp& st = scheme.param_storage[t];
      double use_local = local_bytes(sig.in[k], f.sbp_shape.data(), static_cast<double>(tensor.bytes()));
      double store_local = local_bytes(st, f.sbp_shape.data(), static_cast<double>(tensor.bytes()));
      gathered += std::max(0.0, use_local - store_local);
      gathered_grads += std::max(0.0, use_local - store_local) *
                        grad_reduce_bytes_per_param(tensor.dtype, scheme.grad_reduce_16bit) / dtype_bytes(tensor.dtype);
      if (param_stage[t] == s) continue;
      param_stage[t] = s;
      const ParamMemory pm = param_memory(tensor, st, f.sbp_shape, scheme.shard_optimizer, opt_bpp, grad_bpp);
      param_mem[s] += pm.bytes;
      out.optimizer_params[s] += pm.optimizer_params;  // each replica steps only its shard
    }
    transient[s] = std::max(transient[s], gathered);
    if (scheme.fsdp) {
      if (i == 0 || layer[i] != layer[i - 1]) {
        layer_gathered.push_back(0);
        layer_grads.push_back(0);
        layer_stage.push_back(s);
      }
      layer_gathered.back() += gathered;
      layer_grads.back() += gathered_grads;
    }
  }
  // FSDP holds a layer's gathered parameters and its full gradient (until the reduce-scatter into
  // the shard) while the neighbour it prefetches is gathered too: the next layer in forward, the
  // previous one in backward (FSDP2's and Megatron-FSDP's two parameter buffers).
  for (size_t l = 0; l < layer_gathered.size(); ++l) {
    double neighbour = 0;
    if (l > 0 && layer_stage[l - 1] == layer_stage[l]) neighbour = layer_gathered[l - 1];
    if (l + 1 < layer_gathered.size() && layer_stage[l + 1] == layer_stage[l]) {
      neighbour = std::max(neighbour, layer_gathered[l + 1]);
    }
    const int s = layer_stage[l];
    transient[s] = std::max(transient[s], layer_gathered[l] + layer_grads[l] + neighbour);
  }
  // Saved activations of one micro-batch, at their producer's SBP: what backward reads
  // (activation_memory.hpp); full recompute holds one block's recomputed tensors at a time.
  const ActivationFactors af = activation_factors(graph, scheme.recompute, scheme.recompute_modules);
  std::vector<double> block_act(S, 0);
  std::map<std::pair<int, std::string>, double> per_block;
  for (int i = 0; i < n_ops; ++i) {
    const Op& op = graph.ops[i];
    for (size_t o = 0; o < op.outputs.size(); ++o) {
      const int t = op.outputs[o];
      if (af.kept[t] == 0 && af.recomputed[t] == 0) continue;
      const int s = S > 1 ? keeping_stage(graph, f.op_stage, t, f.op_stage[i]) : 0;
      const double local = kept_local_bytes(graph, scheme, f, af, i, static_cast<int>(o));
      act_mem[s] += af.kept[t] * local;
      if (af.recomputed[t] > 0) per_block[{s, op.block}] += af.recomputed[t] * local;
    }
  }
  for (const auto& [key, bytes] : per_block) block_act[key.first] = std::max(block_act[key.first], bytes);
  out.stage_activation_bytes = act_mem;
  out.stage_param_bytes = param_mem;
  for (int s = 0; s < S; ++s) {
    const double in_flight = in_flight_micro_batches(s, S, f.micro_batches, scheme.schedule, f.virtual_stages);
    const double total = param_mem[s] + act_mem[s] * in_flight + block_act[s] + transient[s];
    if (total > out.peak_bytes) {
      out.peak_bytes = total;
      out.param_bytes = param_mem[s];
      out.activation_bytes = act_mem[s] * in_flight + block_act[s];
      out.peak_stage = s;
    }
  }
  return out;
}

std::string memory_infeasible_reason(const MemoryPhase& mem, const GpuSpec& gpu, int stages) {
  char buf[320];
  char reserve[96] = "";
  if (gpu.memory_reserve_bytes > 0) {
    std::snprintf(reserve, sizeof reserve, " (%.1f GB less a %.1f GB reserve)", gpu.memory_bytes / 1e9,
                  gpu.memory_reserve_bytes / 1e9);
  }
  std::snprintf(buf, sizeof buf,
                "peak memory %.1f GB exceeds the %.1f GB%s of a %s%s (parameters, gradients and "
                "optimizer %.1f GB, activations %.1f GB)",
                mem.peak_bytes / 1e9, usable_memory_bytes(gpu) / 1e9, reserve, gpu.name.c_str(),
                stages > 1 ? (" on stage " + std::to_string(mem.peak_stage)).c_str() : "",
                mem.param_bytes / 1e9, mem.activation_bytes / 1e9);
  return buf;
}

}  // namespace autoddl::costmodel
