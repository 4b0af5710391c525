// The one table of op kinds (op_registry.hpp): each built-in kind's row comes from its own file
// (ops/<kind>.cpp) through the list in op_kind.hpp; register_op_kind() appends more. Rows are
// in id order, so op_kind_info() is an index. Also the name tables of the unary, binary and
// pool functions.
#include <string>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/op_registry.hpp"
#include "kinds.hpp"

namespace autoddl::costmodel {

namespace {
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

namespace {
// The table: the built-in rows in id order, then registered kinds. Reserved for every id an
// OpKind can hold, so registering never moves the rows that callers point at.
std::vector<OpKindInfo>& table() {
  static std::vector<OpKindInfo> rows = [] {
    std::vector<OpKindInfo> r;
    r.reserve(256);
#define AUTODDL_OP_KIND_ROW(kind) r.push_back(ops::kind##_kind());
    AUTODDL_BUILTIN_OP_KINDS(AUTODDL_OP_KIND_ROW)
#undef AUTODDL_OP_KIND_ROW
    return r;
  }();
  return rows;
}
}  // namespace

const std::vector<OpKindInfo>& op_kinds() { return table(); }

const OpKindInfo& op_kind_info(OpKind kind) {
  const auto& rows = table();
  auto i = static_cast<size_t>(kind);
  AUTODDL_CHECK(i < rows.size() && rows[i].kind == kind) << "no op kind with id " << i;
  return rows[i];
}

OpKind register_op_kind(OpKindInfo info) {
  std::vector<OpKindInfo>& rows = table();
  AUTODDL_CHECK(rows.size() < 256) << "op kinds are uint8_t ids: 256 at most";
  AUTODDL_CHECK(!info.name.empty() && find_op_kind(info.name) == nullptr)
      << "op kind name '" << info.name << "' is empty or taken";
  AUTODDL_CHECK(info.infer_shapes && info.work && info.min_inputs >= 0 && info.min_inputs <= info.max_inputs &&
                info.max_inputs <= kMaxOpInputs)
      << "op kind '" << info.name << "' needs a shape rule, a work rule and 0 <= min_inputs <= max_inputs <= "
      << kMaxOpInputs;
  info.kind = static_cast<OpKind>(rows.size());
  rows.push_back(info);
  return info.kind;
}

void unregister_op_kind(OpKind kind) {
  std::vector<OpKindInfo>& rows = table();
  AUTODDL_CHECK(static_cast<int>(rows.size()) > kBuiltinOpKindCount && rows.back().kind == kind)
      << "only the op kind registered last can be removed";
  rows.pop_back();
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
