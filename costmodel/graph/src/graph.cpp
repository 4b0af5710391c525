// Graph checks and totals (graph.hpp). finalize() is the one gate every graph passes, zoo-built
// or loaded from JSON: unique names, positive dims, valid indices, each activation written by
// exactly one op, ops in topological order, output shapes equal to the kind's shape rule; then
// it fills each op's work from the op registry and each tensor's consumers.
#include "autoddl/costmodel/graph.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/op_registry.hpp"
#include "op_error.hpp"
#include "ops/kinds.hpp"

namespace autoddl::costmodel {

namespace {
// Tensors beyond 2^60 elements would overflow byte counts; no real model comes near.
constexpr int64_t kMaxElements = int64_t{1} << 60;

std::string role_name(TensorRole r) {
  switch (r) {
    case TensorRole::activation:
      return "activation";
    case TensorRole::parameter:
      return "parameter";
    case TensorRole::input:
      return "input";
  }
  return "?";
}

struct Checker {
  Graph& g;

  [[noreturn]] void tensor_error(const Tensor& t, const std::string& reason) const {
    throw InputError(g.source, "tensor " + t.name, reason);
  }
  [[noreturn]] void op_error(const Op& op, const std::string& slot, const std::string& label,
                             const std::string& reason) const {
    throw OpError(g.source, op.name, slot, label, reason);
  }
  std::string input_slot(int j) const { return "inputs[" + std::to_string(j) + "]"; }
  std::string output_slot(int j) const { return "outputs[" + std::to_string(j) + "]"; }
  std::string input_label(const Op& op, int j) const {
    return "input " + std::to_string(j) + " '" + g.tensors[op.inputs[j]].name + "': ";
  }
  std::string output_label(const Op& op, int j) const {
    return "output " + std::to_string(j) + " '" + g.tensors[op.outputs[j]].name + "': ";
  }

  void check_tensors() const {
    std::unordered_map<std::string, int> seen;
    for (size_t i = 0; i < g.tensors.size(); ++i) {
      const Tensor& t = g.tensors[i];
      if (t.name.empty()) {
        throw InputError(g.source, "tensor #" + std::to_string(i), "has an empty name");
      }
      if (!seen.emplace(t.name, static_cast<int>(i)).second) {
        tensor_error(t, "name is used by more than one tensor");
      }
      int64_t n = 1;
      for (size_t d = 0; d < t.shape.size(); ++d) {
        if (t.shape[d] < 1) {
          tensor_error(t, "dimension " + std::to_string(d) + " of " + ops::shape_str(t.shape) +
                              " is " + std::to_string(t.shape[d]) + "; dimensions must be >= 1");
        }
        if (__builtin_mul_overflow(n, t.shape[d], &n) || n > kMaxElements) {
          tensor_error(t, "shape " + ops::shape_str(t.shape) + " has more than 2^60 elements");
        }
      }
    }
  }

  // Validates names, kinds and tensor indices of every op; returns the writer op of each tensor.
  std::vector<int> check_ops_and_writers() const {
    std::unordered_map<std::string, int> seen;
    std::vector<int> writer(g.tensors.size(), -1);
    int n_tensors = static_cast<int>(g.tensors.size());
    for (size_t i = 0; i < g.ops.size(); ++i) {
      const Op& op = g.ops[i];
      if (op.name.empty())
        throw InputError(g.source, "op #" + std::to_string(i), "has an empty name");
      if (!seen.emplace(op.name, static_cast<int>(i)).second) {
        op_error(op, "name", "", "name is used by more than one op");
      }
      if (static_cast<size_t>(op.kind) >= op_kinds().size()) {
        op_error(op, "kind", "", "unknown op kind " + std::to_string(static_cast<int>(op.kind)));
      }
      const OpKindInfo& info = op_kind_info(op.kind);
      int n_in = static_cast<int>(op.inputs.size());
      if (n_in < info.min_inputs || n_in > info.max_inputs) {
        std::string want = info.min_inputs == info.max_inputs
                               ? std::to_string(info.min_inputs)
                               : std::to_string(info.min_inputs) + " or more";
        op_error(op, "inputs", "",
                 "has " + std::to_string(n_in) + " inputs but a " + std::string(info.name) +
                     " op takes " + want);
      }
      for (int j = 0; j < n_in; ++j) {
        if (op.inputs[j] < 0 || op.inputs[j] >= n_tensors) {
          op_error(op, input_slot(j), "input " + std::to_string(j) + ": ",
                   "tensor index " + std::to_string(op.inputs[j]) + " is out of range");
        }
      }
      if (op.outputs.empty()) op_error(op, "outputs", "", "has no outputs");
      for (int j = 0; j < static_cast<int>(op.outputs.size()); ++j) {
        int t = op.outputs[j];
        if (t < 0 || t >= n_tensors) {
          op_error(op, output_slot(j), "output " + std::to_string(j) + ": ",
                   "tensor index " + std::to_string(t) + " is out of range");
        }
        const Tensor& out = g.tensors[t];
        if (out.role != TensorRole::activation) {
          op_error(op, output_slot(j), output_label(op, j),
                   "is a " + role_name(out.role) + " tensor; only activations are written by ops");
        }
        if (writer[t] != -1) {
          tensor_error(out, "is written by both op '" + g.ops[writer[t]].name + "' and op '" +
                                op.name + "'; each tensor is written once");
        }
        writer[t] = static_cast<int>(i);
      }
    }
    return writer;
  }

  void check_order_and_shapes(const std::vector<int>& writer) {
    for (size_t i = 0; i < g.ops.size(); ++i) {
      Op& op = g.ops[i];
      for (int j = 0; j < static_cast<int>(op.inputs.size()); ++j) {
        const Tensor& in = g.tensors[op.inputs[j]];
        if (in.role != TensorRole::activation) continue;
        int w = writer[op.inputs[j]];
        if (w == -1) {
          op_error(op, input_slot(j), input_label(op, j),
                   "is an activation that no op produces (data fed to the model must have "
                   "role input)");
        }
        if (w == static_cast<int>(i)) {
          op_error(op, input_slot(j), input_label(op, j), "is the op's own output (a cycle)");
        }
        if (w > static_cast<int>(i)) {
          op_error(op, input_slot(j), input_label(op, j),
                   "is produced by op '" + g.ops[w].name + "', which comes later (ops[" +
                       std::to_string(w) + "]); ops must be in topological order");
        }
      }
      const OpKindInfo& info = op_kind_info(op.kind);
      std::vector<Shape> shapes = info.infer_shapes(g, op);
      if (shapes.size() != op.outputs.size()) {
        op_error(op, "outputs", "",
                 "has " + std::to_string(op.outputs.size()) + " outputs but a " +
                     std::string(info.name) + " op produces " + std::to_string(shapes.size()));
      }
      for (int j = 0; j < static_cast<int>(shapes.size()); ++j) {
        Tensor& out = g.tensors[op.outputs[j]];
        if (out.shape != shapes[j]) {
          op_error(op, output_slot(j), output_label(op, j),
                   "is declared " + ops::shape_str(out.shape) + " but the " +
                       std::string(info.name) + " rule gives " + ops::shape_str(shapes[j]));
        }
        out.producer = static_cast<int>(i);
      }
      bool batched = false;
      for (int t : op.inputs) {
        const Tensor& x = g.tensors[t];
        batched |= x.role != TensorRole::parameter && x.batched;
      }
      for (int t : op.outputs) g.tensors[t].batched = batched;
      op.work = info.work(g, op);
    }
  }

  void check_all_produced(const std::vector<int>& writer) const {
    for (size_t t = 0; t < g.tensors.size(); ++t) {
      const Tensor& x = g.tensors[t];
      if (x.role == TensorRole::activation && writer[t] == -1) {
        tensor_error(x, "is an activation that no op produces");
      }
    }
  }

  void fill_consumers() {
    g.consumers.assign(g.tensors.size(), {});
    for (size_t i = 0; i < g.ops.size(); ++i) {
      for (int t : g.ops[i].inputs) {
        auto& c = g.consumers[t];
        if (c.empty() || c.back() != static_cast<int>(i)) c.push_back(static_cast<int>(i));
      }
    }
  }

  // The attention core, Megatron-LM's "core attention" (the module selective recompute
  // checkpoints): the fused attention op; unfused, the score product of two activations (Q·Kᵀ),
  // the softmax, masking and dropout ops that read it, and the product with V that closes it.
  // By kind and data flow only: a shape test (a rank-4 tensor with two equal trailing sizes)
  // also took the (batch, seq, heads, head_dim) views of Q, K, V and the attention output for
  // scores whenever heads == head_dim (Llama 3 405B: 128 heads of 128).
  // An unfused core is causal when its score product says so (`causal`); P·V that closes it
  // takes the flag from the region, so the causal-aware FLOPs halve both products.
  void mark_attention_core() {
    enum : uint8_t { closed, open, open_causal };
    std::vector<uint8_t> region(g.tensors.size(), closed);  // an open core's output: the region goes on
    auto activation = [&](int t) { return g.tensors[t].role != TensorRole::parameter; };
    for (Op& op : g.ops) {
      const uint8_t in = op.inputs.empty() ? uint8_t{closed} : region[op.inputs[0]];
      bool core = false;
      uint8_t out = closed;
      switch (op.kind) {
        case OpKind::attention: core = true; break;
        case OpKind::matmul:
          // Q·Kᵀ opens the region; P·V (its first input from the region) closes it.
          core = op.inputs.size() >= 2 && activation(op.inputs[0]) && activation(op.inputs[1]);
          if (core && in == closed) out = op.attrs.causal ? open_causal : open;
          if (core && in == open_causal) op.attrs.causal = true;
          break;
        case OpKind::softmax:
        case OpKind::unary:
        case OpKind::binary:
          core = in != closed;
          out = in;
          break;
        default: break;
      }
      op.attention_core = core;
      for (int t : op.outputs) region[t] = out;
    }
  }
};
}  // namespace

int64_t Tensor::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

bool Tensor::needs_gradient() const {
  return role != TensorRole::input && (dtype == DType::fp32 || dtype == DType::fp16 || dtype == DType::bf16);
}

void Graph::finalize() {
  for (Tensor& t : tensors) t.producer = -1;
  Checker c{*this};
  c.check_tensors();
  std::vector<int> writer = c.check_ops_and_writers();
  c.check_order_and_shapes(writer);
  c.check_all_produced(writer);
  c.fill_consumers();
  c.mark_attention_core();
}

int64_t Graph::parameter_count() const {
  int64_t n = 0;
  for (const Tensor& t : tensors) {
    if (t.role == TensorRole::parameter) n += t.elements();
  }
  return n;
}

int64_t Graph::parameter_bytes() const {
  int64_t n = 0;
  for (const Tensor& t : tensors) {
    if (t.role == TensorRole::parameter) n += t.bytes();
  }
  return n;
}

double Graph::forward_flops() const {
  double f = 0;
  for (const Op& op : ops) f += op.work.fwd_flops;
  return f;
}

bool multiplies_weight(const Graph& g, const Op& op) {
  return op_kind_info(op.kind).gemm && op.inputs.size() >= 2 && g.tensors[op.inputs[1]].role == TensorRole::parameter;
}

bool runs_fp8_gemm(const Graph& g, const Op& op) {
  return g.fp8_gemms && !op.block.empty() && multiplies_weight(g, op) && op_kind_info(op.kind).fp8_gemm;
}

std::vector<bool> expert_major_tensors(const Graph& g) {
  std::vector<bool> em(g.tensors.size(), false);
  for (const Op& op : g.ops) {  // topological order
    const MoeBoundary b = op_kind_info(op.kind).moe;
    bool inside = b == MoeBoundary::enters;
    for (int t : op.inputs) inside = inside || em[t];
    if (b == MoeBoundary::leaves) inside = false;
    for (int t : op.outputs) em[t] = inside;
  }
  return em;
}

std::vector<bool> expert_parameters(const Graph& g) {
  const std::vector<bool> em = expert_major_tensors(g);
  std::vector<bool> ep(g.tensors.size(), false);
  for (const Op& op : g.ops) {
    bool reads_expert = false;
    for (int t : op.inputs) reads_expert = reads_expert || em[t];
    if (!reads_expert || op_kind_info(op.kind).moe == MoeBoundary::leaves) continue;
    for (int t : op.inputs) ep[t] = ep[t] || g.tensors[t].role == TensorRole::parameter;
  }
  return ep;
}

int64_t routed_experts(const Graph& g) {
  for (const Op& op : g.ops) {
    if (op.kind == OpKind::moe_dispatch) return op.attrs.experts;
  }
  return 0;
}

const Op* fused_attention(const Graph& g) {
  for (const Op& op : g.ops) {
    if (op.kind == OpKind::attention) return &op;
  }
  return nullptr;
}

bool is_mtp_block(const std::string& block) { return block.rfind("mtp", 0) == 0; }

int mtp_depths(const Graph& g) {
  int n = 0;
  const std::string* last = nullptr;
  for (const Op& op : g.ops) {
    if (!is_mtp_block(op.block) || (last && *last == op.block)) continue;
    last = &op.block;
    ++n;
  }
  return n;
}

double active_parameter_count(const Graph& g) {
  // Per tensor, the share of its experts a token reaches (1 outside expert regions).
  std::vector<double> share(g.tensors.size(), 1.0);
  std::vector<double> param_share(g.tensors.size(), 1.0);
  for (const Op& op : g.ops) {
    double s = 1.0;
    if (op_kind_info(op.kind).moe == MoeBoundary::enters) {
      s = static_cast<double>(op.attrs.top_k) / static_cast<double>(op.attrs.experts);
    } else if (op_kind_info(op.kind).moe == MoeBoundary::none) {
      for (int t : op.inputs) s = std::min(s, share[t]);
    }
    for (int t : op.inputs) {
      if (g.tensors[t].role == TensorRole::parameter) param_share[t] = std::min(param_share[t], s);
    }
    for (int t : op.outputs) share[t] = s;
  }
  double n = 0;
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    if (g.tensors[t].role == TensorRole::parameter) n += param_share[t] * static_cast<double>(g.tensors[t].elements());
  }
  return n;
}

double Graph::model_forward_flops(FlopsConvention convention) const {
  double f = 0;
  for (const Op& op : ops) {
    // The products only (GEMMs, convolutions, attention), as Megatron-LM's formula and MFU count:
    // the unfused core's softmax and dropout are kernels the fused one does not run.
    if (!op_kind_info(op.kind).gemm && op.kind != OpKind::attention && op.kind != OpKind::conv2d) continue;
    double flops = op.work.fwd_flops;
    const bool causal_core = op.attention_core && op.attrs.causal;
    if (causal_core && op.kind == OpKind::attention && convention == FlopsConvention::megatron) {
      flops *= 2;  // the fused kernel computes only the unmasked half
    } else if (causal_core && op.kind == OpKind::matmul && convention == FlopsConvention::causal) {
      flops /= 2;  // an unfused product computes the whole s×s, masked or not
    }
    f += flops;
  }
  return f;
}

double Graph::backward_flops() const {
  double f = 0;
  for (const Op& op : ops) f += op.work.bwd_flops;
  return f;
}

int Graph::find_tensor(const std::string& name) const {
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

int Graph::find_op(const std::string& name) const {
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace autoddl::costmodel
