// GraphBuilder: writes a Graph the way model code reads (`auto h = b.linear("fc1", x, 4096)`).
// Each call appends one op (or a small layer of ops with its parameters), infers the output
// shape with the kind's own shape rule, and returns the output tensor's index. Inside
// begin_block("layer.3") ... end_block(), names get the prefix "layer.3." and ops the block label.
// finish() runs Graph::finalize(), so a built graph is checked exactly like a loaded one.
#pragma once
#include <string>
#include <vector>

#include "autoddl/costmodel/graph.hpp"

namespace autoddl::costmodel {

class GraphBuilder {
 public:
  // `dtype` is the model dtype: parameters and activations use it (the loss is fp32).
  GraphBuilder(std::string name, std::string source, int64_t batch, DType dtype);

  DType dtype() const { return dtype_; }
  const Shape& shape(int tensor) const { return g_.tensors[tensor].shape; }

  // Data fed each iteration (role input): images, token ids, labels.
  // `batched`: axis 0 is the batch (micro-batching splits it); false for batch-free data such
  // as position indices.
  int input(const std::string& name, Shape shape, DType dtype, bool batched = true);
  // A trainable tensor (role parameter) in the model dtype; the name gets the block prefix.
  int parameter(const std::string& name, Shape shape);

  void begin_block(const std::string& label);
  void end_block();

  // ---- one call per op kind (the op and its output tensor are both named prefix + name) ----
  // causal: a · b is the score product of a causally masked attention (Graph::mark_attention_core).
  int matmul(const std::string& name, int a, int b, bool transpose_b = false, bool causal = false);
  // Fused attention (FlashAttention) over q, k, v of shape (batch, heads, seq, head_dim).
  int attention(const std::string& name, int q, int k, int v, bool causal);
  int conv2d(const std::string& name, int x, int w, int stride, int pad);
  int pool(const std::string& name, int x, PoolFn fn, int kernel, int stride, int pad);
  int global_avg_pool(const std::string& name, int x);
  int bias_add(const std::string& name, int x, int bias, int axis = -1);
  int unary(const std::string& name, int x, UnaryFn fn);
  int relu(const std::string& name, int x) { return unary(name, x, UnaryFn::relu); }
  int gelu(const std::string& name, int x) { return unary(name, x, UnaryFn::gelu); }
  int dropout(const std::string& name, int x) { return unary(name, x, UnaryFn::dropout); }
  int tanh(const std::string& name, int x) { return unary(name, x, UnaryFn::tanh); }
  int sigmoid(const std::string& name, int x) { return unary(name, x, UnaryFn::sigmoid); }
  int add(const std::string& name, int a, int b);
  int mul(const std::string& name, int a, int b);
  int softmax(const std::string& name, int x, int axis = -1);
  int layer_norm(const std::string& name, int x, int gamma, int beta, int axis = -1);
  int batch_norm(const std::string& name, int x, int gamma, int beta);
  int embedding(const std::string& name, int table, int indices);
  int reshape(const std::string& name, int x, Shape shape);
  int transpose(const std::string& name, int x, std::vector<int> perm);
  int concat(const std::string& name, std::vector<int> xs, int axis = -1);
  int cross_entropy(const std::string& name, int logits, int labels);
  // Mixture-of-Experts (op_kind.hpp): router probabilities (..., E) from x and a (h, E)
  // weight; x dispatched to (slots, E, h); a grouped GEMM by a (E, k, n) weight; expert
  // outputs combined back to tokens by the probabilities.
  int moe_router(const std::string& name, int x, int weight);
  int moe_dispatch(const std::string& name, int x, int64_t experts, int top_k, double capacity_factor);
  int expert_matmul(const std::string& name, int x, int weight);
  int moe_combine(const std::string& name, int expert_out, int probs);

  // ---- layers: create their parameters "<name>.weight" / "<name>.bias" / "<name>.gamma" ----
  // x(..., in) -> (..., out): matmul with a (in, out) weight, then bias_add.
  int linear(const std::string& name, int x, int64_t out_features, bool bias = true);
  // NCHW convolution with a (out, C, k, k) weight; bias_add over axis 1 if `bias`.
  int conv(const std::string& name, int x, int64_t out_channels, int kernel, int stride, int pad,
           bool bias);
  // LayerNorm over the last axis, BatchNorm over channels, each with gamma and beta.
  int ln(const std::string& name, int x);
  // RMSNorm over the last axis: a layer_norm op with gamma and no beta (Llama).
  int rms_norm(const std::string& name, int x);
  int bn(const std::string& name, int x);
  // x(slots, E, in) -> (slots, E, out): expert_matmul with an (E, in, out) weight, no bias.
  int expert_linear(const std::string& name, int x, int64_t out_features);

  // Finalizes (Graph::finalize, which throws InputError) and hands the graph over.
  Graph finish();

 private:
  int add_op(OpKind kind, const std::string& name, std::vector<int> inputs, OpAttrs attrs,
             const Shape* declared_shape = nullptr);
  std::string scoped(const std::string& name) const { return prefix_ + name; }

  Graph g_;
  DType dtype_;
  std::string block_, prefix_;
};

}  // namespace autoddl::costmodel
