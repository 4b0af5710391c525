// The graph IR: tensors with logical (global, unsharded) shapes, ops of the kinds in the op
// registry, and the DAG they form. A Graph is a value: the zoo and the JSON loader build one,
// finalize() validates it (shapes agree, DAG in topological order) and fills the per-op
// FLOPs/bytes that every cost model reads. Layout conventions: activations are
// batch-major ((batch, ...)); images NCHW; a matmul's B is (k, n), or (n, k) with transpose_b.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "autoddl/costmodel/dtype.hpp"
#include "autoddl/costmodel/op_kind.hpp"

namespace autoddl::costmodel {

using Shape = std::vector<int64_t>;

enum class TensorRole : uint8_t { activation, parameter, input };

struct Tensor {
  std::string name;
  Shape shape;  // logical (global) shape
  DType dtype = DType::fp32;
  TensorRole role = TensorRole::activation;
  int producer = -1;  // index of the op that writes it; -1 for inputs and parameters
  // Axis 0 is the batch (inputs: as declared; activations: when an input of their producer is,
  // set by finalize()). Micro-batching divides only these; GPT's positions (seq) are not.
  bool batched = true;

  int64_t elements() const;
  int64_t bytes() const { return elements() * dtype_bytes(dtype); }
  // Whether backward produces this tensor's gradient: a floating-point activation or parameter.
  bool needs_gradient() const;
};

// How model FLOPs count a causal attention core (the workload's FLOPs, not the kernels'):
// - megatron: over the whole s×s score matrix, causal or not: Megatron-LM's
//   num_floating_point_operations (megatron/training/training.py; Narayanan et al. 2021, appendix),
//   the count behind published MFU and TFLOP/s per GPU;
// - causal: only the unmasked half of a causal core (what FlashAttention's causal kernels compute).
enum class FlopsConvention : uint8_t { megatron, causal };

enum class UnaryFn : uint8_t { relu, gelu, dropout, tanh, sigmoid, silu };
enum class BinaryFn : uint8_t { add, mul };
enum class PoolFn : uint8_t { max, avg, global_avg };

// Attributes; each op kind reads only the fields its comment names.
struct OpAttrs {
  int kernel_h = 1, kernel_w = 1;  // conv2d (from the weight), pool
  int stride = 1, pad = 0;         // conv2d, pool
  PoolFn pool = PoolFn::max;       // pool
  UnaryFn unary = UnaryFn::relu;   // unary
  BinaryFn binary = BinaryFn::add; // binary
  bool transpose_b = false;        // matmul: B is stored (..., n, k)
  bool causal = false;             // attention, and matmuls of an unfused attention core: position i attends to positions <= i
  int axis = -1;                   // bias_add / softmax / layer_norm (first normalized axis) / concat; <0 counts from the end
  std::vector<int> perm;           // transpose
  int64_t experts = 0;             // moe_dispatch: routed experts E
  int top_k = 0;                   // moe_dispatch: experts per token
  double capacity_factor = 1.0;    // moe_dispatch: slots per expert over the balanced mean (>= 1)
};

// Work of one op for one whole (global) batch, before any parallelization.
struct OpWork {
  double fwd_flops = 0;  // a multiply-add counts as 2
  double bwd_flops = 0;  // input- and weight-gradient together
  double fwd_bytes = 0;  // bytes read + written by the forward kernel(s)
  double bwd_bytes = 0;
};

struct Op {
  std::string name;
  OpKind kind = OpKind::unary;
  std::vector<int> inputs;   // tensor indices, in the order the kind defines
  std::vector<int> outputs;  // tensor indices
  OpAttrs attrs;
  std::string block;         // repeated-block label ("layer.3"), empty if none; used to tie and stage
  OpWork work;               // filled by Graph::finalize()
  // Part of an attention core (filled by Graph::finalize(), mark_attention_core in graph.cpp):
  // what Megatron's selective recompute re-runs. Found by op kind and data flow, never by shape.
  bool attention_core = false;
};

struct Graph {
  std::string name;     // "gpt", or the file stem of a loaded graph
  std::string source;   // where it came from, for error messages ("zoo:gpt", a file path)
  int64_t batch = 1;    // global samples per iteration
  std::vector<Tensor> tensors;
  std::vector<Op> ops;  // in topological order after finalize()
  std::vector<std::vector<int>> consumers;  // per tensor: the ops reading it (finalize())
  // The layers' linear GEMMs run in FP8 (Transformer Engine's recipe on Hopper: inputs cast to
  // FP8 with per-tensor scales, tensors and everything else stay in their dtype; which GEMMs:
  // runs_fp8_gemm). The zoo's dtype=fp8.
  bool fp8_gemms = false;

  // Checks every op (inputs exist, shapes agree with the kind's shape rule, outputs written
  // once, ops in topological order) and fills Op::work and consumers. Throws InputError
  // naming `source`, the op and the reason.
  void finalize();

  int64_t parameter_count() const;     // elements of all parameter tensors
  int64_t parameter_bytes() const;
  double forward_flops() const;        // whole batch, as the kernels run it (see model_forward_flops)
  // Model FLOPs of one forward pass over the whole batch: the workload's products (GEMMs,
  // convolutions, attention; no elementwise kernels), whatever kernels run them, so a model's
  // MFU does not move with the FlashAttention flag (FlopsConvention says how causal cores count).
  double model_forward_flops(FlopsConvention convention) const;
  double backward_flops() const;
  double forward_flops_per_sample() const {  // model FLOPs, Megatron-LM's convention
    return model_forward_flops(FlopsConvention::megatron) / static_cast<double>(batch);
  }
  int find_tensor(const std::string& name) const;  // -1 if absent
  int find_op(const std::string& name) const;      // -1 if absent
};

// Whether `op` is a GEMM that multiplies an activation (input 0) by a weight (input 1, a
// parameter): a Linear layer's GEMM, whose backward computes a weight gradient from the
// activation. Not the attention core's products of two activations.
bool multiplies_weight(const Graph& g, const Op& op);

// Whether `op` runs as an FP8 GEMM: with fp8_gemms, exactly the GEMMs Transformer Engine runs in
// FP8 under Megatron-LM's --fp8-format: the Linear modules of the transformer layers (an op in a
// block that multiplies an activation by a weight: QKV, projection, FC1, FC2). Not the output
// layer (Megatron-Core's GPTModel builds it as tensor_parallel.ColumnParallelLinear, outside
// TE's fp8_autocast modules), and not the attention core's products of two activations
// (unfused: torch's baddbmm/bmm in bf16; fused: FP8 attention is the separate
// --fp8-dot-product-attention, off by default).
bool runs_fp8_gemm(const Graph& g, const Op& op);

// Mixture-of-Experts: per tensor, whether it lies between a dispatch and its combine (the
// dispatch's output and everything computed from it before the combine), laid out (token
// slots, experts, ...).
std::vector<bool> expert_major_tensors(const Graph& g);
// Per tensor, whether it is an expert's parameter: one an op reads together with an
// expert-major tensor (the grouped GEMMs' weights), as opposed to the router's and the dense
// layers'.
std::vector<bool> expert_parameters(const Graph& g);
// Routed experts per MoE layer (the dispatches' `experts`), 0 for a dense model.
int64_t routed_experts(const Graph& g);
// The model's first fused attention op (OpKind::attention: where Megatron-Core runs context
// parallelism), nullptr when it has none. Its queries are (batch, heads, seq, head_dim).
const Op* fused_attention(const Graph& g);
// Multi-token prediction (DeepSeek-V3 §2.2; Megatron-Core's MultiTokenPredictionBlock): a block
// whose label starts with "mtp" ("mtp.0", "mtp.1", ...) is one MTP depth, placed by a pipeline
// layout's `m` rather than `t`.
bool is_mtp_block(const std::string& block);
// The MTP depths of the graph (its distinct mtp blocks), 0 without MTP.
int mtp_depths(const Graph& g);
// Parameters one token's forward pass multiplies: all but the experts it is not routed to
// (each MoE layer's expert weights count top_k/experts of theirs). Equals parameter_count()
// for a dense model.
double active_parameter_count(const Graph& g);

}  // namespace autoddl::costmodel
