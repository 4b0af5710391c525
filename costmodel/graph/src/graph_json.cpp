// The JSON graph format (docs/graph-json.md): reading with errors that name the JSON path
// (ops[3].inputs[1]), writing what the reader reads. Loading ends in Graph::finalize, so a
// user graph passes the same checks as a zoo graph; finalize's errors are mapped back onto
// JSON paths. Op attributes are read and written by graph_json_attrs.cpp.
#include "autoddl/costmodel/graph_json.hpp"

#include <filesystem>
#include <unordered_map>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/op_registry.hpp"
#include "graph_json_attrs.hpp"
#include "json_reader.hpp"
#include "op_error.hpp"

namespace autoddl::costmodel {

namespace {
using nlohmann::json;
using Reader = JsonReader;

constexpr std::string_view kRoleNames[] = {"activation", "parameter", "input"};

// Maps an error of Graph::finalize onto the JSON path of the tensor or op it concerns.
[[noreturn]] void rethrow_at_json_path(const InputError& e, const Graph& g) {
  if (const auto* oe = dynamic_cast<const OpError*>(&e)) {
    int i = g.find_op(oe->op_name());
    if (i >= 0) {
      std::string path = "ops[" + std::to_string(i) + "]";
      std::string detail = oe->detail();
      const std::string& slot = oe->slot();
      if (!slot.empty()) path += "." + slot;
      // name the tensor in an inputs[j] / outputs[j] slot
      for (const char* list : {"inputs[", "outputs["}) {
        if (slot.rfind(list, 0) == 0) {
          size_t j = std::stoul(slot.substr(std::string(list).size()));
          const auto& idx = list[0] == 'i' ? g.ops[i].inputs : g.ops[i].outputs;
          if (j < idx.size() && idx[j] >= 0 && idx[j] < static_cast<int>(g.tensors.size())) {
            detail = "tensor '" + g.tensors[idx[j]].name + "' " + detail;
          }
        }
      }
      throw InputError(e.file(), path, "op '" + oe->op_name() + "': " + detail);
    }
  }
  const std::string prefix = "tensor ";
  if (e.field().rfind(prefix, 0) == 0) {
    int t = g.find_tensor(e.field().substr(prefix.size()));
    if (t >= 0) {
      throw InputError(e.file(), "tensors[" + std::to_string(t) + "]",
                       "tensor '" + g.tensors[t].name + "' " + e.reason());
    }
  }
  throw;  // not about a tensor or op we can locate: rethrow as is
}

std::string stem_of(const std::string& source) {
  std::string stem = std::filesystem::path(source).stem().string();
  return stem.empty() ? "graph" : stem;
}
// Bounds that keep element and byte counts (int64) far from overflow.
constexpr int64_t kMaxBatch = int64_t{1} << 24;
constexpr int64_t kMaxElements = int64_t{1} << 48;
}  // namespace

Graph graph_from_json(const json& j, const std::string& source) {
  Reader r{source};
  if (!j.is_object()) r.fail("", "a graph must be a JSON object");
  r.check_keys(j, "", {"batch", "tensors", "ops"}, {"name", "comment"});
  Graph g;
  g.source = source;
  g.name = j.contains("name") ? r.string(j["name"], "name") : stem_of(source);
  g.batch = r.integer(j["batch"], "batch", 1, kMaxBatch);

  const json& tensors = r.array(j["tensors"], "tensors");
  std::unordered_map<std::string, int> tensor_index;
  for (size_t i = 0; i < tensors.size(); ++i) {
    std::string path = Reader::at("tensors", i);
    const json& t = tensors[i];
    r.check_keys(t, path, {"name", "shape", "dtype", "role"}, {"batched", "comment"});
    Tensor x;
    x.name = r.string(t["name"], path + ".name");
    if (!tensor_index.emplace(x.name, static_cast<int>(i)).second) {
      r.fail(path + ".name", "duplicate tensor name '" + x.name + "' (also tensors[" +
                                 std::to_string(tensor_index[x.name]) + "])");
    }
    const json& shape = r.array(t["shape"], path + ".shape");
    double elements = 1;
    for (size_t d = 0; d < shape.size(); ++d) {
      x.shape.push_back(r.integer(shape[d], Reader::at(path + ".shape", d), 1, kMaxElements));
      elements *= static_cast<double>(x.shape.back());
    }
    if (elements > static_cast<double>(kMaxElements)) r.fail(path + ".shape", "more than 2^48 elements");
    std::string dtype = r.string(t["dtype"], path + ".dtype");
    if (!parse_dtype(dtype, x.dtype)) {
      r.fail(path + ".dtype",
             "unknown dtype '" + dtype + "' (known: fp32, fp16, bf16, fp8, int32, int64)");
    }
    std::string role = r.string(t["role"], path + ".role");
    bool role_ok = false;
    for (size_t k = 0; k < std::size(kRoleNames); ++k) {
      if (role == kRoleNames[k]) {
        x.role = static_cast<TensorRole>(k);
        role_ok = true;
      }
    }
    if (!role_ok)
      r.fail(path + ".role", "unknown role '" + role + "' (known: activation, parameter, input)");
    if (t.contains("batched")) {
      if (x.role != TensorRole::input) {
        r.fail(path + ".batched", "only inputs declare it (an activation is batched when its producer reads batched data)");
      }
      x.batched = r.boolean(t["batched"], path + ".batched");
    }
    g.tensors.push_back(std::move(x));
  }

  const json& ops = r.array(j["ops"], "ops");
  std::unordered_map<std::string, int> op_index;
  for (size_t i = 0; i < ops.size(); ++i) {
    std::string path = Reader::at("ops", i);
    const json& o = ops[i];
    r.check_keys(o, path, {"name", "kind", "inputs", "outputs"}, {"attrs", "block", "comment"});
    Op op;
    op.name = r.string(o["name"], path + ".name");
    if (!op_index.emplace(op.name, static_cast<int>(i)).second) {
      r.fail(path + ".name", "duplicate op name '" + op.name + "' (also ops[" +
                                 std::to_string(op_index[op.name]) + "])");
    }
    std::string kind = r.string(o["kind"], path + ".kind");
    const OpKindInfo* info = find_op_kind(kind);
    if (!info) {
      std::string known;
      for (const OpKindInfo& k : op_kinds())
        known += (known.empty() ? "" : ", ") + std::string(k.name);
      r.fail(path + ".kind", "unknown op kind '" + kind + "' (known: " + known + ")");
    }
    op.kind = info->kind;
    for (const char* list : {"inputs", "outputs"}) {
      std::string lpath = path + "." + list;
      const json& names = r.array(o[list], lpath);
      auto& indices = list[0] == 'i' ? op.inputs : op.outputs;
      for (size_t k = 0; k < names.size(); ++k) {
        std::string name = r.string(names[k], Reader::at(lpath, k));
        auto it = tensor_index.find(name);
        if (it == tensor_index.end()) r.fail(Reader::at(lpath, k), "unknown tensor '" + name + "'");
        indices.push_back(it->second);
      }
    }
    op.attrs = read_op_attrs(r, o.contains("attrs") ? &o["attrs"] : nullptr, path + ".attrs",
                             op.kind, info->name);
    if (o.contains("block")) op.block = r.string(o["block"], path + ".block");
    if (op.kind == OpKind::conv2d && op.inputs.size() == 2) {  // the kernel comes from the weight
      const Shape& w = g.tensors[op.inputs[1]].shape;
      if (w.size() == 4) {
        op.attrs.kernel_h = static_cast<int>(w[2]);
        op.attrs.kernel_w = static_cast<int>(w[3]);
      }
    }
    g.ops.push_back(std::move(op));
  }

  try {
    g.finalize();
  } catch (const InputError& e) {
    rethrow_at_json_path(e, g);
  }
  return g;
}

Graph load_graph_file(const std::string& path) {
  const nlohmann::json j = read_json_file(path);
  return guard_json(path, [&] { return graph_from_json(j, path); });
}

json graph_to_json(const Graph& g) {
  json tensors = json::array();
  for (const Tensor& t : g.tensors) {
    tensors.push_back({{"name", t.name},
                       {"shape", t.shape},
                       {"dtype", dtype_name(t.dtype)},
                       {"role", kRoleNames[static_cast<size_t>(t.role)]}});
    if (t.role == TensorRole::input && !t.batched) tensors.back()["batched"] = false;
  }
  json ops = json::array();
  for (const Op& op : g.ops) {
    json o = {{"name", op.name}, {"kind", op_kind_info(op.kind).name}};
    json inputs = json::array(), outputs = json::array();
    for (int t : op.inputs) inputs.push_back(g.tensors[t].name);
    for (int t : op.outputs) outputs.push_back(g.tensors[t].name);
    o["inputs"] = inputs;
    o["outputs"] = outputs;
    json attrs = write_op_attrs(op);
    if (!attrs.empty()) o["attrs"] = attrs;
    if (!op.block.empty()) o["block"] = op.block;
    ops.push_back(std::move(o));
  }
  return {{"name", g.name}, {"batch", g.batch}, {"tensors", tensors}, {"ops", ops}};
}

}  // namespace autoddl::costmodel
