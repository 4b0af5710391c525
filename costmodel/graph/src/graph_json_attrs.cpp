// Op attributes in graph JSON: one table with a row per JSON key ("fn", "kernel", "stride",
// "pad", "transpose_b", "axis", "perm", "causal", "experts", "top_k", "capacity_factor"), each
// naming the op kinds it applies to, how it is read and written, and when it is required.
// Adding a kind with existing attributes = adding it to those rows' kind lists. docs/graph-json.md lists the same keys for users.
#include "graph_json_attrs.hpp"

#include "autoddl/costmodel/op_registry.hpp"

namespace autoddl::costmodel {

namespace {
using nlohmann::json;
using Reader = JsonReader;

struct AttrRule {
  std::string_view key;
  std::vector<OpKind> kinds;
  // Reads the value into attrs (after the kind's fn, so pool rules can depend on it).
  void (*read)(const Reader& r, const json& v, const std::string& path, OpAttrs& a);
  json (*write)(const OpAttrs& a);
  // Whether an op of this kind with these attrs must give the key; nullptr: optional.
  bool (*required)(OpKind kind, const OpAttrs& a);
  // Whether the writer emits it for this op (it always can be read back).
  bool (*written)(OpKind kind, const OpAttrs& a);
};

bool always(OpKind, const OpAttrs&) { return true; }
// A matmul says `causal` only when it is the score product of a causal attention core.
bool causal_matmul(OpKind kind, const OpAttrs& a) { return kind != OpKind::matmul || a.causal; }
bool windowed_pool(OpKind kind, const OpAttrs& a) {
  return kind != OpKind::pool || a.pool != PoolFn::global_avg;
}

template <class Fn>
std::string fn_choices(std::string_view (*name)(Fn), std::initializer_list<Fn> fns) {
  std::string out;
  for (Fn f : fns) out += (out.empty() ? "" : ", ") + std::string(name(f));
  return out;
}

void read_fn(OpKind kind, const Reader& r, const json& v, const std::string& path, OpAttrs& a) {
  std::string s = r.string(v, path);
  bool ok = false;
  std::string choices;
  if (kind == OpKind::unary) {
    ok = parse_unary_fn(s, a.unary);
    choices = fn_choices(unary_fn_name, {UnaryFn::relu, UnaryFn::gelu, UnaryFn::dropout,
                                         UnaryFn::tanh, UnaryFn::sigmoid, UnaryFn::silu});
  } else if (kind == OpKind::binary) {
    ok = parse_binary_fn(s, a.binary);
    choices = fn_choices(binary_fn_name, {BinaryFn::add, BinaryFn::mul});
  } else {
    ok = parse_pool_fn(s, a.pool);
    choices = fn_choices(pool_fn_name, {PoolFn::max, PoolFn::avg, PoolFn::global_avg});
  }
  if (!ok) r.fail(path, "unknown function '" + s + "' (known: " + choices + ")");
}

using AttrPath = const std::string&;

void read_unary_fn(const Reader& r, const json& v, AttrPath p, OpAttrs& a) {
  read_fn(OpKind::unary, r, v, p, a);
}
void read_binary_fn(const Reader& r, const json& v, AttrPath p, OpAttrs& a) {
  read_fn(OpKind::binary, r, v, p, a);
}
void read_pool_fn(const Reader& r, const json& v, AttrPath p, OpAttrs& a) {
  read_fn(OpKind::pool, r, v, p, a);
}
void read_kernel(const Reader& r, const json& v, AttrPath p, OpAttrs& a) {
  if (v.is_number_integer()) {
    a.kernel_h = a.kernel_w = r.small_int(v, p, 1);
    return;
  }
  if (!v.is_array() || v.size() != 2) r.fail(p, "expected an integer or [height, width]");
  a.kernel_h = r.small_int(v[0], Reader::at(p, 0), 1);
  a.kernel_w = r.small_int(v[1], Reader::at(p, 1), 1);
}
void read_stride(const Reader& r, const json& v, AttrPath p, OpAttrs& a) {
  a.stride = r.small_int(v, p, 1);
}
void read_pad(const Reader& r, const json& v, AttrPath p, OpAttrs& a) {
  a.pad = r.small_int(v, p, 0);
}
void read_transpose_b(const Reader& r, const json& v, AttrPath p, OpAttrs& a) {
  a.transpose_b = r.boolean(v, p);
}
void read_causal(const Reader& r, const json& v, AttrPath p, OpAttrs& a) { a.causal = r.boolean(v, p); }
void read_axis(const Reader& r, const json& v, AttrPath p, OpAttrs& a) {
  a.axis = static_cast<int>(r.integer(v, p, -1024, 1024));
}
void read_perm(const Reader& r, const json& v, AttrPath p, OpAttrs& a) {
  r.array(v, p);
  a.perm.clear();
  for (size_t i = 0; i < v.size(); ++i) a.perm.push_back(r.small_int(v[i], Reader::at(p, i), 0));
}

void read_experts(const Reader& r, const json& v, AttrPath p, OpAttrs& a) {
  a.experts = r.integer(v, p, 1, int64_t{1} << 24);
}
void read_top_k(const Reader& r, const json& v, AttrPath p, OpAttrs& a) { a.top_k = r.small_int(v, p, 1); }
void read_capacity_factor(const Reader& r, const json& v, AttrPath p, OpAttrs& a) {
  if (!v.is_number()) r.fail(p, "expected a number");
  a.capacity_factor = v.get<double>();
  if (!(a.capacity_factor >= 1.0 && a.capacity_factor <= 1024)) r.fail(p, "must lie in [1, 1024]");
}

json write_unary_fn(const OpAttrs& a) { return unary_fn_name(a.unary); }
json write_binary_fn(const OpAttrs& a) { return binary_fn_name(a.binary); }
json write_pool_fn(const OpAttrs& a) { return pool_fn_name(a.pool); }
json write_kernel(const OpAttrs& a) { return json::array({a.kernel_h, a.kernel_w}); }
json write_stride(const OpAttrs& a) { return a.stride; }
json write_pad(const OpAttrs& a) { return a.pad; }
json write_transpose_b(const OpAttrs& a) { return a.transpose_b; }
json write_axis(const OpAttrs& a) { return a.axis; }
json write_causal(const OpAttrs& a) { return a.causal; }
json write_perm(const OpAttrs& a) { return a.perm; }
json write_experts(const OpAttrs& a) { return a.experts; }
json write_top_k(const OpAttrs& a) { return a.top_k; }
json write_capacity_factor(const OpAttrs& a) { return a.capacity_factor; }

const std::vector<AttrRule>& attr_rules() {
  using K = OpKind;
  // Rows of one kind are read in table order: `fn` comes before the keys that depend on it.
  // clang-format off
  static const std::vector<AttrRule> rules = {
      // key          kinds                                               read              write              required       written
      {"fn",          {K::unary},                                          read_unary_fn,    write_unary_fn,    always,        always},
      {"fn",          {K::binary},                                         read_binary_fn,   write_binary_fn,   always,        always},
      {"fn",          {K::pool},                                           read_pool_fn,     write_pool_fn,     always,        always},
      {"kernel",      {K::pool},                                           read_kernel,      write_kernel,      windowed_pool, windowed_pool},
      {"stride",      {K::conv2d, K::pool},                                read_stride,      write_stride,      nullptr,       windowed_pool},
      {"pad",         {K::conv2d, K::pool},                                read_pad,         write_pad,         nullptr,       windowed_pool},
      {"transpose_b", {K::matmul},                                         read_transpose_b, write_transpose_b, nullptr,       always},
      {"axis",        {K::bias_add, K::softmax, K::layer_norm, K::concat}, read_axis,        write_axis,        nullptr,       always},
      {"perm",        {K::transpose},                                      read_perm,        write_perm,        always,        always},
      {"causal",      {K::attention, K::matmul},                           read_causal,      write_causal,      nullptr,       causal_matmul},
      {"experts",     {K::moe_dispatch},                                   read_experts,     write_experts,     always,        always},
      {"top_k",       {K::moe_dispatch},                                   read_top_k,       write_top_k,       always,        always},
      {"capacity_factor", {K::moe_dispatch},                               read_capacity_factor, write_capacity_factor, nullptr, always},
  };
  // clang-format on
  return rules;
}

bool rule_applies(const AttrRule& rule, OpKind kind) {
  for (OpKind k : rule.kinds) {
    if (k == kind) return true;
  }
  return false;
}

}  // namespace

OpAttrs read_op_attrs(const Reader& r, const json* attrs, const std::string& path, OpKind kind,
                      std::string_view kind_name) {
  OpAttrs a;
  std::vector<const AttrRule*> rules;
  for (const AttrRule& rule : attr_rules()) {
    if (rule_applies(rule, kind)) rules.push_back(&rule);
  }
  if (attrs) {
    if (!attrs->is_object()) r.fail(path, "expected an object");
    for (const auto& [key, value] : attrs->items()) {
      bool known = false;
      for (const AttrRule* rule : rules) known = known || rule->key == key;
      if (!known) {
        std::string allowed;
        for (const AttrRule* rule : rules)
          allowed += (allowed.empty() ? "" : ", ") + std::string(rule->key);
        r.fail(Reader::sub(path, key),
               "unknown attribute for a " + std::string(kind_name) + " op" +
                   (allowed.empty() ? " (it takes none)" : " (allowed: " + allowed + ")"));
      }
    }
    for (const AttrRule* rule : rules) {  // table order: fn before the keys that depend on it
      auto it = attrs->find(rule->key);
      if (it != attrs->end()) rule->read(r, *it, Reader::sub(path, std::string(rule->key)), a);
    }
  }
  for (const AttrRule* rule : rules) {
    bool given = attrs && attrs->contains(rule->key);
    if (!given && rule->required && rule->required(kind, a)) {
      r.fail(Reader::sub(path, std::string(rule->key)),
             "missing required attribute of a " + std::string(kind_name) + " op");
    }
  }
  return a;
}

json write_op_attrs(const Op& op) {
  json attrs = json::object();
  for (const AttrRule& rule : attr_rules()) {
    if (rule_applies(rule, op.kind) && rule.written(op.kind, op.attrs)) {
      attrs[std::string(rule.key)] = rule.write(op.attrs);
    }
  }
  return attrs;
}

}  // namespace autoddl::costmodel
