// Internal to costmodel: the row each op kind defines in its own file ops/<kind>.cpp, which
// ops/registry.cpp puts in the one table, plus the helpers they share (ops/helpers.cpp). Work
// conventions: a multiply-add counts 2 FLOPs; bytes are those a kernel reads plus writes;
// backward computes only the gradients of inputs that need one (parameters and activations,
// not `input` tensors or integer tensors).
#pragma once
#include <initializer_list>
#include <string>
#include <vector>

#include "autoddl/costmodel/graph.hpp"
#include "autoddl/costmodel/op_registry.hpp"

namespace autoddl::costmodel::ops {

// ---- each built-in kind's whole row of the op table, defined at the end of ops/<kind>.cpp ----
#define AUTODDL_OP_KIND_ROW(kind) OpKindInfo kind##_kind();
AUTODDL_BUILTIN_OP_KINDS(AUTODDL_OP_KIND_ROW)
#undef AUTODDL_OP_KIND_ROW

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

// ---- the vocabulary of the kinds' SBP rules (`using namespace sbp_rule;` in a rule) ----
namespace sbp_rule {
inline const Sbp B = Sbp::broadcast();
inline const Sbp P = Sbp::partial();
inline Sbp S(int axis) { return Sbp::split(axis); }
// A 1-D signature from its inputs' and outputs' SBPs.
Signature1D sig(std::initializer_list<Sbp> in, std::initializer_list<Sbp> out);
inline const Shape& shape_in(const Graph& g, const Op& op, int k) { return g.tensors[op.inputs[k]].shape; }
inline const Shape& shape_out(const Graph& g, const Op& op, int k) { return g.tensors[op.outputs[k]].shape; }
inline int rank_in(const Graph& g, const Op& op, int k) { return static_cast<int>(shape_in(g, op, k).size()); }
inline int norm_axis(int axis, int rank) { return axis < 0 ? axis + rank : axis; }
}  // namespace sbp_rule

}  // namespace autoddl::costmodel::ops
