// GraphBuilder (graph_builder.hpp): appends ops with shapes from each kind's shape rule, so
// zoo builders state only the layer structure. Output dtype: the first floating-point input's
// dtype (the model dtype for parameters and activations), fp32 for losses.
#include "autoddl/costmodel/graph_builder.hpp"
#include "autoddl/costmodel/error.hpp"

#include "autoddl/costmodel/op_registry.hpp"

namespace autoddl::costmodel {

GraphBuilder::GraphBuilder(std::string name, std::string source, int64_t batch, DType dtype)
    : dtype_(dtype) {
  g_.name = std::move(name);
  g_.source = std::move(source);
  g_.batch = batch;
}

int GraphBuilder::input(const std::string& name, Shape shape, DType dtype, bool batched) {
  g_.tensors.push_back({name, std::move(shape), dtype, TensorRole::input, -1, batched});
  return static_cast<int>(g_.tensors.size()) - 1;
}

int GraphBuilder::parameter(const std::string& name, Shape shape) {
  g_.tensors.push_back({scoped(name), std::move(shape), dtype_, TensorRole::parameter, -1});
  return static_cast<int>(g_.tensors.size()) - 1;
}

void GraphBuilder::begin_block(const std::string& label) {
  block_ = label;
  prefix_ = label + ".";
}

void GraphBuilder::end_block() {
  block_.clear();
  prefix_.clear();
}

int GraphBuilder::add_op(OpKind kind, const std::string& name, std::vector<int> inputs,
                         OpAttrs attrs, const Shape* declared_shape) {
  DType out_dtype = dtype_;
  for (int t : inputs) {
    DType d = g_.tensors[t].dtype;
    if (d == DType::fp32 || d == DType::fp16 || d == DType::bf16) {
      out_dtype = d;
      break;
    }
  }
  if (kind == OpKind::cross_entropy) out_dtype = DType::fp32;
  int out = static_cast<int>(g_.tensors.size());
  g_.tensors.push_back({scoped(name), declared_shape ? *declared_shape : Shape{}, out_dtype,
                        TensorRole::activation, -1});
  Op op;
  op.name = scoped(name);
  op.kind = kind;
  op.inputs = std::move(inputs);
  op.outputs = {out};
  op.attrs = std::move(attrs);
  op.block = block_;
  g_.ops.push_back(std::move(op));
  // The kind's own rule gives the shape (and rejects a wrong wiring right here).
  std::vector<Shape> shapes = op_kind_info(kind).infer_shapes(g_, g_.ops.back());
  g_.tensors[out].shape = shapes.at(0);
  return out;
}

int GraphBuilder::matmul(const std::string& name, int a, int b, bool transpose_b, bool causal) {
  OpAttrs at;
  at.transpose_b = transpose_b;
  at.causal = causal;
  return add_op(OpKind::matmul, name, {a, b}, at);
}

int GraphBuilder::moe_router(const std::string& name, int x, int weight) {
  return add_op(OpKind::moe_router, name, {x, weight}, {});
}

int GraphBuilder::moe_dispatch(const std::string& name, int x, int64_t experts, int top_k, double capacity_factor) {
  OpAttrs at;
  at.experts = experts;
  at.top_k = top_k;
  at.capacity_factor = capacity_factor;
  return add_op(OpKind::moe_dispatch, name, {x}, at);
}

int GraphBuilder::expert_matmul(const std::string& name, int x, int weight) {
  return add_op(OpKind::expert_matmul, name, {x, weight}, {});
}

int GraphBuilder::moe_combine(const std::string& name, int expert_out, int probs) {
  return add_op(OpKind::moe_combine, name, {expert_out, probs}, {});
}

int GraphBuilder::expert_linear(const std::string& name, int x, int64_t out_features) {
  const Shape s = shape(x);
  if (s.size() != 3) throw InputError(g_.source, "op " + scoped(name), "expert_linear needs x of shape (slots, experts, in)");
  return expert_matmul(name, x, parameter(name + ".weight", {s[1], s[2], out_features}));
}

int GraphBuilder::attention(const std::string& name, int q, int k, int v, bool causal) {
  OpAttrs at;
  at.causal = causal;
  return add_op(OpKind::attention, name, {q, k, v}, at);
}

int GraphBuilder::conv2d(const std::string& name, int x, int w, int stride, int pad) {
  OpAttrs at;
  at.kernel_h = static_cast<int>(g_.tensors[w].shape.at(2));
  at.kernel_w = static_cast<int>(g_.tensors[w].shape.at(3));
  at.stride = stride;
  at.pad = pad;
  return add_op(OpKind::conv2d, name, {x, w}, at);
}

int GraphBuilder::pool(const std::string& name, int x, PoolFn fn, int kernel, int stride, int pad) {
  OpAttrs at;
  at.pool = fn;
  at.kernel_h = at.kernel_w = kernel;
  at.stride = stride;
  at.pad = pad;
  return add_op(OpKind::pool, name, {x}, at);
}

int GraphBuilder::global_avg_pool(const std::string& name, int x) {
  OpAttrs at;
  at.pool = PoolFn::global_avg;
  return add_op(OpKind::pool, name, {x}, at);
}

int GraphBuilder::bias_add(const std::string& name, int x, int bias, int axis) {
  OpAttrs at;
  at.axis = axis;
  return add_op(OpKind::bias_add, name, {x, bias}, at);
}

int GraphBuilder::unary(const std::string& name, int x, UnaryFn fn) {
  OpAttrs at;
  at.unary = fn;
  return add_op(OpKind::unary, name, {x}, at);
}

int GraphBuilder::add(const std::string& name, int a, int b) {
  OpAttrs at;
  at.binary = BinaryFn::add;
  return add_op(OpKind::binary, name, {a, b}, at);
}

int GraphBuilder::mul(const std::string& name, int a, int b) {
  OpAttrs at;
  at.binary = BinaryFn::mul;
  return add_op(OpKind::binary, name, {a, b}, at);
}

int GraphBuilder::softmax(const std::string& name, int x, int axis) {
  OpAttrs at;
  at.axis = axis;
  return add_op(OpKind::softmax, name, {x}, at);
}

int GraphBuilder::layer_norm(const std::string& name, int x, int gamma, int beta, int axis) {
  OpAttrs at;
  at.axis = axis;
  return add_op(OpKind::layer_norm, name, {x, gamma, beta}, at);
}

int GraphBuilder::batch_norm(const std::string& name, int x, int gamma, int beta) {
  return add_op(OpKind::batch_norm, name, {x, gamma, beta}, {});
}

int GraphBuilder::embedding(const std::string& name, int table, int indices) {
  return add_op(OpKind::embedding, name, {table, indices}, {});
}

int GraphBuilder::reshape(const std::string& name, int x, Shape shape) {
  return add_op(OpKind::reshape, name, {x}, {}, &shape);
}

int GraphBuilder::transpose(const std::string& name, int x, std::vector<int> perm) {
  OpAttrs at;
  at.perm = std::move(perm);
  return add_op(OpKind::transpose, name, {x}, at);
}

int GraphBuilder::concat(const std::string& name, std::vector<int> xs, int axis) {
  OpAttrs at;
  at.axis = axis;
  return add_op(OpKind::concat, name, std::move(xs), at);
}

int GraphBuilder::cross_entropy(const std::string& name, int logits, int labels) {
  return add_op(OpKind::cross_entropy, name, {logits, labels}, {});
}

int GraphBuilder::linear(const std::string& name, int x, int64_t out_features, bool bias) {
  int64_t in_features = g_.tensors[x].shape.back();
  int w = parameter(name + ".weight", {in_features, out_features});
  int y = matmul(name, x, w);
  if (!bias) return y;
  int b = parameter(name + ".bias", {out_features});
  return bias_add(name + ".add_bias", y, b);
}

int GraphBuilder::conv(const std::string& name, int x, int64_t out_channels, int kernel, int stride,
                       int pad, bool bias) {
  int64_t in_channels = g_.tensors[x].shape.at(1);
  int w = parameter(name + ".weight", {out_channels, in_channels, kernel, kernel});
  int y = conv2d(name, x, w, stride, pad);
  if (!bias) return y;
  int b = parameter(name + ".bias", {out_channels});
  return bias_add(name + ".add_bias", y, b, 1);
}

int GraphBuilder::ln(const std::string& name, int x) {
  int64_t h = g_.tensors[x].shape.back();
  int gamma = parameter(name + ".gamma", {h});
  int beta = parameter(name + ".beta", {h});
  return layer_norm(name, x, gamma, beta);
}

int GraphBuilder::rms_norm(const std::string& name, int x) {
  int64_t h = g_.tensors[x].shape.back();
  return add_op(OpKind::layer_norm, name, {x, parameter(name + ".gamma", {h})}, OpAttrs{});
}

int GraphBuilder::bn(const std::string& name, int x) {
  int64_t c = g_.tensors[x].shape.at(1);
  int gamma = parameter(name + ".gamma", {c});
  int beta = parameter(name + ".beta", {c});
  return batch_norm(name, x, gamma, beta);
}

Graph GraphBuilder::finish() {
  g_.finalize();
  return std::move(g_);
}

}  // namespace autoddl::costmodel
