// Scheme JSON reader/writer (see scheme_json.hpp and docs/scheme-json.md).
#include "autoddl/costmodel/scheme_json.hpp"

#include "autoddl/costmodel/recompute_modules.hpp"

#include <map>
#include <set>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/mesh.hpp"

namespace autoddl::costmodel {

namespace {

constexpr const char* kFormat = "autoddl-scheme-1";
// Largest mesh size, micro-batch count, virtual-stage count or chunk a scheme may name.
constexpr int64_t kMaxSchemeInt = 1 << 20;

struct Reader {
  const std::string& source;
  [[noreturn]] void fail(const std::string& field, const std::string& why) const {
    throw InputError(source, field, why);
  }
  void keys(const nlohmann::json& j, const std::string& where, const std::set<std::string>& allowed,
            const std::set<std::string>& required) const {
    if (!j.is_object()) fail(where.empty() ? "(top level)" : where, "must be an object");
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (!allowed.count(it.key())) fail(where + (where.empty() ? "" : ".") + it.key(), "unknown key");
    }
    for (const std::string& k : required) {
      if (!j.contains(k)) fail(where + (where.empty() ? "" : ".") + k, "missing");
    }
  }
  int integer(const nlohmann::json& j, const std::string& field, int lo) const {
    if (!json_int_in(j, lo, INT64_MAX)) fail(field, "must be an integer >= " + std::to_string(lo));
    if (!json_int_in(j, lo, kMaxSchemeInt)) fail(field, "is out of range (at most " + std::to_string(kMaxSchemeInt) + ")");
    return j.get<int>();
  }
  std::string string(const nlohmann::json& j, const std::string& field) const {
    if (!j.is_string()) fail(field, "must be a string");
    return j.get<std::string>();
  }
  NdSbp sbp(const nlohmann::json& j, const std::string& field, int nd) const {
    NdSbp s;
    if (!j.is_string() || !parse_nd_sbp(j.get<std::string>(), nd, s)) {
      fail(field, "must be an nd-SBP string with " + std::to_string(nd) + " entries like \"(S(0),B)\"");
    }
    return s;
  }
};

}  // namespace

nlohmann::json scheme_to_json(const Scheme& s, const Graph& g) {
  nlohmann::json ops = nlohmann::json::array();
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const OpSignature& sig = s.op_sigs[i];
    nlohmann::json in = nlohmann::json::array(), out = nlohmann::json::array();
    for (int k = 0; k < sig.n_in; ++k) in.push_back(to_string(sig.in[k]));
    for (int o = 0; o < sig.n_out; ++o) out.push_back(to_string(sig.out[o]));
    nlohmann::json row = {{"op", g.ops[i].name}, {"in", in}, {"out", out}};
    if (!s.op_chunk.empty()) row["chunk"] = s.op_chunk[i];
    ops.push_back(row);
  }
  nlohmann::json params = nlohmann::json::object();
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    if (g.tensors[t].role == TensorRole::parameter) params[g.tensors[t].name] = to_string(s.param_storage[t]);
  }
  nlohmann::json j = {{"format", kFormat},
          {"name", s.name},
          {"model", g.name},
          {"mesh", s.mesh_shape},
          {"pipeline_dim", s.pipeline_dim},
          {"micro_batches", s.micro_batches},
          {"virtual_stages", s.virtual_stages},
          {"schedule", std::string(schedule_name(s.schedule))},
          {"recompute", std::string(recompute_name(s.recompute))},
          {"recompute_modules", recompute_modules_text(s.recompute_modules)},
          {"shard_optimizer", s.shard_optimizer},
          {"regather_in_backward", s.regather_in_backward},
          {"scatter_gather_sends", s.scatter_gather_sends},
          {"bucket_bytes", s.bucket_bytes},
          {"ops", ops},
          {"param_storage", params}};
  // Written only when set, so files of schemes without them stay byte-identical.
  if (s.overlap_tp_comm) j["overlap_tp_comm"] = true;
  if (s.overlap_p2p_comm) j["overlap_p2p_comm"] = true;
  if (s.grad_reduce_16bit) j["grad_reduce_16bit"] = true;
  if (s.overlap_param_gather) j["overlap_param_gather"] = true;
  if (s.overlap_cp_comm) j["overlap_cp_comm"] = true;
  if (s.fsdp) j["fsdp"] = true;
  return j;
}

Scheme scheme_from_json(const nlohmann::json& j, const Graph& g, const ClusterSpec& c,
                        const std::string& source) {
  Reader rd{source};
  rd.keys(j, "",
          {"format", "name", "model", "mesh", "pipeline_dim", "micro_batches", "virtual_stages", "schedule",
           "recompute", "recompute_modules", "shard_optimizer", "regather_in_backward", "scatter_gather_sends", "bucket_bytes", "ops",
           "param_storage", "overlap_tp_comm", "overlap_p2p_comm", "grad_reduce_16bit",
           "overlap_param_gather", "overlap_cp_comm", "fsdp"},
          {"format", "mesh", "ops"});
  if (rd.string(j["format"], "format") != kFormat) rd.fail("format", std::string("must be \"") + kFormat + "\"");
  Scheme s;
  s.name = j.contains("name") ? rd.string(j["name"], "name") : source;
  if (j.contains("model") && rd.string(j["model"], "model") != g.name) {
    rd.fail("model", "scheme is for '" + j["model"].get<std::string>() + "' but the model is '" + g.name + "'");
  }
  if (!j["mesh"].is_array() || j["mesh"].empty()) rd.fail("mesh", "must be a non-empty array of sizes");
  for (size_t d = 0; d < j["mesh"].size(); ++d) s.mesh_shape.push_back(rd.integer(j["mesh"][d], "mesh[" + std::to_string(d) + "]", 1));
  try {
    make_mesh(c, s.mesh_shape, "mesh");
  } catch (const InputError& e) {
    rd.fail("mesh", e.reason());
  }
  if (j.contains("pipeline_dim")) {
    if (!j["pipeline_dim"].is_number_integer()) rd.fail("pipeline_dim", "must be an integer (-1 = none)");
    if (!json_int_in(j["pipeline_dim"], -1, static_cast<int64_t>(s.mesh_shape.size()) - 1)) {
      rd.fail("pipeline_dim", "must be -1 or a mesh dim index");
    }
    s.pipeline_dim = j["pipeline_dim"].get<int>();
    if (s.pipeline_dim < -1 || s.pipeline_dim >= static_cast<int>(s.mesh_shape.size())) {
      rd.fail("pipeline_dim", "must be -1 or a mesh dim index");
    }
  }
  if (s.sbp_shape().size() > static_cast<size_t>(kMaxMeshDims)) {
    rd.fail("mesh", "has " + std::to_string(s.mesh_shape.size()) + " dimensions: at most " +
                        std::to_string(kMaxMeshDims) + " besides the pipeline's (pipeline_dim)");
  }
  if (j.contains("micro_batches")) s.micro_batches = rd.integer(j["micro_batches"], "micro_batches", 1);
  if (g.batch % s.micro_batches != 0) rd.fail("micro_batches", "does not divide the batch " + std::to_string(g.batch));
  if (j.contains("virtual_stages")) s.virtual_stages = rd.integer(j["virtual_stages"], "virtual_stages", 1);
  if (j.contains("schedule") && !parse_schedule(rd.string(j["schedule"], "schedule"), s.schedule)) {
    rd.fail("schedule", "must be gpipe, 1f1b or interleaved");
  }
  if (j.contains("recompute") && !parse_recompute(rd.string(j["recompute"], "recompute"), s.recompute)) {
    rd.fail("recompute", "must be none, selective or full");
  }
  if (j.contains("recompute_modules")) {
    std::string bad;
    const std::string text = rd.string(j["recompute_modules"], "recompute_modules");
    if (text != "core_attn" && !parse_recompute_modules(text, s.recompute_modules, bad)) {
      rd.fail("recompute_modules", "unknown module '" + bad + "' (Megatron's names joined by +, e.g. mla_up_proj+mlp)");
    }
  }
  for (auto [flag, field] : {std::pair<const char*, bool*>{"shard_optimizer", &s.shard_optimizer},
                              {"regather_in_backward", &s.regather_in_backward},
                              {"scatter_gather_sends", &s.scatter_gather_sends},
                              {"overlap_tp_comm", &s.overlap_tp_comm},
                              {"overlap_p2p_comm", &s.overlap_p2p_comm},
                              {"grad_reduce_16bit", &s.grad_reduce_16bit},
                              {"overlap_param_gather", &s.overlap_param_gather},
                              {"overlap_cp_comm", &s.overlap_cp_comm},
                              {"fsdp", &s.fsdp}}) {
    if (!j.contains(flag)) continue;
    if (!j[flag].is_boolean()) rd.fail(flag, "must be true or false");
    *field = j[flag].get<bool>();
  }
  if (s.fsdp && !s.regather_in_backward) {
    rd.fail("fsdp", "needs regather_in_backward: true (FSDP frees the gathered parameters after forward and gathers them again)");
  }
  if (j.contains("bucket_bytes")) {
    if (!j["bucket_bytes"].is_number() || j["bucket_bytes"].get<double>() <= 0) rd.fail("bucket_bytes", "must be > 0");
    s.bucket_bytes = j["bucket_bytes"].get<double>();
  }

  const std::vector<int> sbp = s.sbp_shape();
  const int nd = static_cast<int>(sbp.size());
  const auto& ops = j["ops"];
  if (!ops.is_array()) rd.fail("ops", "must be an array");
  std::map<std::string, size_t> row_of;
  for (size_t r = 0; r < ops.size(); ++r) {
    std::string at = "ops[" + std::to_string(r) + "]";
    rd.keys(ops[r], at, {"op", "in", "out", "chunk"}, {"op", "in", "out"});
    std::string name = rd.string(ops[r]["op"], at + ".op");
    if (g.find_op(name) < 0) rd.fail(at + ".op", "unknown op '" + name + "' in model " + g.name);
    if (!row_of.emplace(name, r).second) rd.fail(at + ".op", "op '" + name + "' listed twice");
  }
  s.op_sigs.resize(g.ops.size());
  bool any_chunk = false;
  std::vector<int> chunks(g.ops.size(), 0);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    auto it = row_of.find(op.name);
    if (it == row_of.end()) rd.fail("ops", "no signature for op '" + op.name + "'");
    const auto& row = ops[it->second];
    std::string at = "ops[" + std::to_string(it->second) + "]";
    if (!row["in"].is_array() || row["in"].size() != op.inputs.size()) {
      rd.fail(at + ".in", "needs " + std::to_string(op.inputs.size()) + " entries (one per input)");
    }
    if (!row["out"].is_array() || row["out"].size() != op.outputs.size()) {
      rd.fail(at + ".out", "needs " + std::to_string(op.outputs.size()) + " entries (one per output)");
    }
    OpSignature sig;
    sig.n_in = static_cast<int>(op.inputs.size());
    sig.n_out = static_cast<int>(op.outputs.size());
    for (int k = 0; k < sig.n_in; ++k) sig.in[k] = rd.sbp(row["in"][k], at + ".in[" + std::to_string(k) + "]", nd);
    for (int o = 0; o < sig.n_out; ++o) sig.out[o] = rd.sbp(row["out"][o], at + ".out[" + std::to_string(o) + "]", nd);
    // Must be one of the op's legal nd signatures on this mesh.
    std::vector<Shape> in_shapes, out_shapes;
    for (int t : op.inputs) in_shapes.push_back(micro_batch_shape(g.tensors[t], s.micro_batches));
    for (int t : op.outputs) out_shapes.push_back(micro_batch_shape(g.tensors[t], s.micro_batches));
    bool legal = false;
    for (const OpSignature& cand : nd_signatures(g, op, sbp.data(), nd, in_shapes, out_shapes)) {
      bool same = true;
      for (int k = 0; k < sig.n_in; ++k) same = same && cand.in[k] == sig.in[k];
      for (int o = 0; o < sig.n_out; ++o) same = same && cand.out[o] == sig.out[o];
      if (same) {
        sig = cand;
        legal = true;
        break;
      }
    }
    if (!legal) {
      rd.fail(at, "not a legal signature for " + op.name + " on mesh " + std::to_string(nd) +
                      "-D (or a split does not divide its micro-batch shape): " + signature_string(g, op, sig));
    }
    s.op_sigs[i] = sig;
    if (row.contains("chunk")) {
      chunks[i] = rd.integer(row["chunk"], at + ".chunk", 0);
      any_chunk = true;
    }
  }
  if (any_chunk) {
    if (s.pipeline_dim < 0) rd.fail("ops", "chunks given but pipeline_dim is -1");
    const int max_chunk = s.stages() * s.virtual_stages;
    for (size_t i = 0; i < chunks.size(); ++i) {
      if (chunks[i] >= max_chunk) rd.fail("ops", "chunk of '" + g.ops[i].name + "' >= stages*virtual_stages");
    }
    s.op_chunk = chunks;
  }
  s.param_storage.assign(g.tensors.size(), NdSbp::all(Sbp::broadcast(), nd));
  if (j.contains("param_storage")) {
    const auto& ps = j["param_storage"];
    if (!ps.is_object()) rd.fail("param_storage", "must be an object {tensor: nd-SBP}");
    for (auto it = ps.begin(); it != ps.end(); ++it) {
      int t = g.find_tensor(it.key());
      if (t < 0 || g.tensors[t].role != TensorRole::parameter) {
        rd.fail("param_storage." + it.key(), "not a parameter of " + g.name);
      }
      NdSbp st = rd.sbp(it.value(), "param_storage." + it.key(), nd);
      if (st.any_partial() || !divides(st, sbp.data(), g.tensors[t].shape)) {
        rd.fail("param_storage." + it.key(), "storage must be S or B and divide the parameter's shape");
      }
      s.param_storage[t] = st;
    }
  }
  return s;
}

Scheme load_scheme_file(const std::string& path, const Graph& g, const ClusterSpec& c) {
  const nlohmann::json j = read_json_file(path);
  return guard_json(path, [&] { return scheme_from_json(j, g, c, path); });
}

}  // namespace autoddl::costmodel
