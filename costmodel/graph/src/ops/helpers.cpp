// Helpers shared by the op-kind files: located errors (OpError), shape printing and axis
// arithmetic, the rule for which inputs need a gradient in backward, and the SBP rules' sig().
#include <string>

#include "../op_error.hpp"
#include "kinds.hpp"

namespace autoddl::costmodel::ops {

const Tensor& input(const Graph& g, const Op& op, int i) { return g.tensors[op.inputs[i]]; }
const Tensor& output(const Graph& g, const Op& op, int i) { return g.tensors[op.outputs[i]]; }

void fail(const Graph& g, const Op& op, const std::string& reason) {
  throw OpError(g.source, op.name, "", "", reason);
}

void fail_input(const Graph& g, const Op& op, int i, const std::string& reason) {
  std::string label = "input " + std::to_string(i);
  if (i >= 0 && i < static_cast<int>(op.inputs.size())) {
    label += " '" + input(g, op, i).name + "'";
  }
  throw OpError(g.source, op.name, "inputs[" + std::to_string(i) + "]", label + ": ", reason);
}

void fail_output(const Graph& g, const Op& op, int i, const std::string& reason) {
  std::string label = "output " + std::to_string(i);
  if (i >= 0 && i < static_cast<int>(op.outputs.size())) {
    label += " '" + output(g, op, i).name + "'";
  }
  throw OpError(g.source, op.name, "outputs[" + std::to_string(i) + "]", label + ": ", reason);
}

std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  return out + "]";
}

int64_t product(const Shape& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < s.size(); ++i) p *= s[i];
  return p;
}

int normalize_axis(const Graph& g, const Op& op, int axis, size_t rank, const char* attr) {
  int r = static_cast<int>(rank);
  int a = axis < 0 ? axis + r : axis;
  if (a < 0 || a >= r) {
    fail(g, op,
         std::string(attr) + " " + std::to_string(axis) + " is out of range for rank " +
             std::to_string(r));
  }
  return a;
}

void require_rank(const Graph& g, const Op& op, int i, size_t min_rank, const char* layout) {
  const Tensor& t = input(g, op, i);
  if (t.shape.size() < min_rank) {
    fail_input(g, op, i, "has shape " + shape_str(t.shape) + " but must be " + std::string(layout));
  }
}

void require_integer(const Graph& g, const Op& op, int i, const char* what) {
  const Tensor& t = input(g, op, i);
  if (is_float(t.dtype)) {
    fail_input(
        g, op, i,
        std::string(what) + " must be int32 or int64, not " + std::string(dtype_name(t.dtype)));
  }
}

bool is_float(DType t) { return t == DType::fp32 || t == DType::fp16 || t == DType::bf16; }

bool needs_grad(const Graph& g, const Op& op, int i) { return input(g, op, i).needs_gradient(); }

double bytes_of(const Tensor& t) { return static_cast<double>(t.bytes()); }
double elements_of(const Tensor& t) { return static_cast<double>(t.elements()); }

Signature1D sbp_rule::sig(std::initializer_list<Sbp> in, std::initializer_list<Sbp> out) {
  Signature1D s;
  int i = 0;
  for (Sbp x : in) s.in[i++] = x;
  int o = 0;
  for (Sbp x : out) s.out[o++] = x;
  return s;
}

}  // namespace autoddl::costmodel::ops
