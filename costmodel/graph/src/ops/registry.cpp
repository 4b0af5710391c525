// The one table of op kinds (op_registry.hpp): name, input arity, shape rule and work, one row
// per kind, each row's functions defined in ops/<kind>.cpp. Rows follow the OpKind enum order so
// op_kind_info() is an index. Also the name tables of the unary, binary and pool functions.
#include <string>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/op_registry.hpp"
#include "../sbp_rules.hpp"
#include "kinds.hpp"

namespace autoddl::costmodel {

namespace {
// Signatures hold a fixed number of operands (signature.hpp), so concat takes at most that many.
constexpr int kMaxConcatInputs = kMaxOpInputs;

template <class Fn>
struct FnName {
  Fn fn;
  std::string_view name;
};

constexpr FnName<UnaryFn> kUnaryNames[] = {{UnaryFn::relu, "relu"},
                                           {UnaryFn::gelu, "gelu"},
                                           {UnaryFn::dropout, "dropout"},
                                           {UnaryFn::tanh, "tanh"},
                                           {UnaryFn::sigmoid, "sigmoid"},
                                           {UnaryFn::silu, "silu"}};
constexpr FnName<BinaryFn> kBinaryNames[] = {{BinaryFn::add, "add"}, {BinaryFn::mul, "mul"}};
constexpr FnName<PoolFn> kPoolNames[] = {
    {PoolFn::max, "max"}, {PoolFn::avg, "avg"}, {PoolFn::global_avg, "global_avg"}};

template <class Fn, size_t N>
std::string_view name_of(const FnName<Fn> (&table)[N], Fn fn) {
  for (const auto& row : table) {
    if (row.fn == fn) return row.name;
  }
  return "?";
}

template <class Fn, size_t N>
bool parse_name(const FnName<Fn> (&table)[N], std::string_view s, Fn& out) {
  for (const auto& row : table) {
    if (row.name == s) {
      out = row.fn;
      return true;
    }
  }
  return false;
}
}  // namespace

const std::vector<OpKindInfo>& op_kinds() {
  using namespace ops;
  namespace sbp_rules = costmodel::sbp_rules;
  static const std::vector<OpKindInfo> table = {
      {OpKind::matmul, "matmul", 2, 2, matmul_shapes, matmul_work, sbp_rules::matmul, matmul_saved, true},
      {OpKind::conv2d, "conv2d", 2, 2, conv2d_shapes, conv2d_work, sbp_rules::conv2d, conv2d_saved},
      {OpKind::pool, "pool", 1, 1, pool_shapes, pool_work, sbp_rules::pool, pool_saved},
      {OpKind::bias_add, "bias_add", 2, 2, bias_add_shapes, bias_add_work, sbp_rules::bias_add, bias_add_saved},
      {OpKind::unary, "unary", 1, 1, unary_shapes, unary_work, sbp_rules::unary, unary_saved},
      {OpKind::binary, "binary", 2, 2, binary_shapes, binary_work, sbp_rules::binary, binary_saved},
      {OpKind::softmax, "softmax", 1, 1, softmax_shapes, softmax_work, sbp_rules::softmax, softmax_saved},
      {OpKind::layer_norm, "layer_norm", 2, 3, layer_norm_shapes, layer_norm_work, sbp_rules::layer_norm, layer_norm_saved},
      {OpKind::batch_norm, "batch_norm", 3, 3, batch_norm_shapes, batch_norm_work, sbp_rules::batch_norm, batch_norm_saved},
      {OpKind::embedding, "embedding", 2, 2, embedding_shapes, embedding_work, sbp_rules::embedding, embedding_saved},
      {OpKind::reshape, "reshape", 1, 1, reshape_shapes, reshape_work, sbp_rules::reshape, reshape_saved},
      {OpKind::transpose, "transpose", 1, 1, transpose_shapes, transpose_work, sbp_rules::transpose, transpose_saved},
      {OpKind::concat, "concat", 2, kMaxConcatInputs, concat_shapes, concat_work, sbp_rules::concat, concat_saved},
      {OpKind::cross_entropy, "cross_entropy", 2, 2, cross_entropy_shapes, cross_entropy_work, sbp_rules::cross_entropy, cross_entropy_saved},
      {OpKind::attention, "attention", 3, 3, attention_shapes, attention_work, sbp_rules::attention, attention_saved},
  };
  return table;
}

const OpKindInfo& op_kind_info(OpKind kind) {
  const auto& table = op_kinds();
  auto i = static_cast<size_t>(kind);
  AUTODDL_CHECK(i < table.size() && table[i].kind == kind)
      << "op registry rows must follow the OpKind enum order (kind " << i << ")";
  return table[i];
}

const OpKindInfo* find_op_kind(std::string_view name) {
  for (const OpKindInfo& info : op_kinds()) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

std::string_view unary_fn_name(UnaryFn f) { return name_of(kUnaryNames, f); }
std::string_view binary_fn_name(BinaryFn f) { return name_of(kBinaryNames, f); }
std::string_view pool_fn_name(PoolFn f) { return name_of(kPoolNames, f); }
bool parse_unary_fn(std::string_view s, UnaryFn& out) { return parse_name(kUnaryNames, s, out); }
bool parse_binary_fn(std::string_view s, BinaryFn& out) { return parse_name(kBinaryNames, s, out); }
bool parse_pool_fn(std::string_view s, PoolFn& out) { return parse_name(kPoolNames, s, out); }

}  // namespace autoddl::costmodel
