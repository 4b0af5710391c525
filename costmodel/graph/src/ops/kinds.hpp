// Internal to costmodel: the functions each op kind defines in its own file ops/<kind>.cpp
// (shape rule and work), which ops/registry.cpp puts in the one table, plus the helpers they
// share (ops/helpers.cpp). Work conventions: a multiply-add counts 2 FLOPs; bytes are those a
// kernel reads plus writes; backward computes only the gradients of inputs that need one
// (parameters and activations, not `input` tensors or integer tensors).
#pragma once
#include <string>
#include <vector>

#include "autoddl/costmodel/graph.hpp"
#include "autoddl/costmodel/op_registry.hpp"

namespace autoddl::costmodel::ops {

// ---- one pair per kind ----
#define AUTODDL_OP_KIND(kind)                                     \
  std::vector<Shape> kind##_shapes(const Graph& g, const Op& op); \
  OpWork kind##_work(const Graph& g, const Op& op);               \
  SavedForBackward kind##_saved(const Graph& g, const Op& op);
AUTODDL_OP_KIND(matmul)
AUTODDL_OP_KIND(conv2d)
AUTODDL_OP_KIND(pool)
AUTODDL_OP_KIND(bias_add)
AUTODDL_OP_KIND(unary)
AUTODDL_OP_KIND(binary)
AUTODDL_OP_KIND(softmax)
AUTODDL_OP_KIND(layer_norm)
AUTODDL_OP_KIND(batch_norm)
AUTODDL_OP_KIND(embedding)
AUTODDL_OP_KIND(reshape)
AUTODDL_OP_KIND(transpose)
AUTODDL_OP_KIND(concat)
AUTODDL_OP_KIND(cross_entropy)
AUTODDL_OP_KIND(attention)
#undef AUTODDL_OP_KIND

// ---- shared helpers ----
const Tensor& input(const Graph& g, const Op& op, int i);
const Tensor& output(const Graph& g, const Op& op, int i);
// Throw an OpError (an InputError with field "op <name>"), about the op or one of its inputs.
[[noreturn]] void fail(const Graph& g, const Op& op, const std::string& reason);
[[noreturn]] void fail_input(const Graph& g, const Op& op, int i, const std::string& reason);
[[noreturn]] void fail_output(const Graph& g, const Op& op, int i, const std::string& reason);

std::string shape_str(const Shape& s);  // "[8, 128, 768]"
// Product of s[begin, end).
int64_t product(const Shape& s, size_t begin, size_t end);
// Maps a possibly negative axis onto [0, rank); fails naming `attr` when out of range.
int normalize_axis(const Graph& g, const Op& op, int axis, size_t rank, const char* attr);
// Fails unless input i has at least `min_rank` axes.
void require_rank(const Graph& g, const Op& op, int i, size_t min_rank, const char* layout);
void require_integer(const Graph& g, const Op& op, int i, const char* what);

bool is_float(DType t);
// Whether backward must produce the gradient of input i.
bool needs_grad(const Graph& g, const Op& op, int i);
double bytes_of(const Tensor& t);
double elements_of(const Tensor& t);

}  // namespace autoddl::costmodel::ops
