// JSON of validation plans and results (see validation_format.hpp, docs/validation-plan.md).
// Readers are strict: a key the format does not define, a missing key or a value out of range
// is an InputError naming the JSON path. Steps keep only the keys of their kind.
#include "autoddl/calib/validation_format.hpp"

#include <climits>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"

namespace autoddl::calib {

using nlohmann::json;

namespace {

constexpr const char* kKindNames[] = {"gemm", "memory", "collective", "send", "recv"};
constexpr const char* kPhaseNames[] = {"fwd", "bwd", "grad_sync", "optimizer"};
constexpr const char* kCollectives[] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"};
constexpr const char* kDtypes[] = {"fp32", "fp16", "bf16", "int32", "int64"};

// Reads one JSON object: every key must be read or allowed, missing required keys fail.
class Obj {
 public:
  Obj(const json& j, const std::string& source, std::string path)
      : j_(j), source_(source), path_(std::move(path)) {
    if (!j.is_object()) fail("", "expected a JSON object");
  }
  [[noreturn]] void fail(const std::string& key, const std::string& reason) const {
    std::string f = path_;
    if (!key.empty()) f += (f.empty() ? "" : ".") + key;
    throw InputError(source_, f.empty() ? "(top level)" : f, reason);
  }
  bool has(const char* key) const { return j_.contains(key); }
  const json& at(const char* key) {
    seen_.insert(key);
    if (!j_.contains(key)) fail(key, "missing");
    return j_.at(key);
  }
  std::string str(const char* key) {
    const json& v = at(key);
    if (!v.is_string()) fail(key, "expected a string");
    return v.get<std::string>();
  }
  std::string one_of(const char* key, const char* const* names, size_t n) {
    std::string s = str(key);
    std::string all;
    for (size_t i = 0; i < n; ++i) {
      if (s == names[i]) return s;
      all += (i ? ", " : "") + std::string(names[i]);
    }
    fail(key, "'" + s + "' is not one of " + all);
  }
  double num(const char* key) {
    const json& v = at(key);
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0) {
      fail(key, "expected a non-negative number");
    }
    return v.get<double>();
  }
  int64_t integer(const char* key, int64_t min) {
    const json& v = at(key);
    if (!v.is_number_integer() || v.get<int64_t>() < min) {
      fail(key, "expected an integer >= " + std::to_string(min));
    }
    // Callers keep most of these in an int: larger values would be truncated, not rejected.
    if (!json_int_in(v, min, INT_MAX)) fail(key, "expected an integer < 2^31");
    return v.get<int64_t>();
  }
  bool boolean(const char* key) {
    const json& v = at(key);
    if (!v.is_boolean()) fail(key, "expected true or false");
    return v.get<bool>();
  }
  const json& array(const char* key) {
    const json& v = at(key);
    if (!v.is_array()) fail(key, "expected an array");
    return v;
  }
  std::string sub(const char* key) const { return path_.empty() ? key : path_ + "." + key; }
  std::string item(const char* key, size_t i) const { return sub(key) + "[" + std::to_string(i) + "]"; }
  // Every key of the object must have been read.
  void done() const {
    for (auto it = j_.begin(); it != j_.end(); ++it) {
      if (!seen_.count(it.key())) fail(it.key(), "unknown key");
    }
  }

 private:
  const json& j_;
  const std::string& source_;
  std::string path_;
  std::set<std::string> seen_;
};

std::vector<int> int_list(Obj& o, const char* key, int min) {
  std::vector<int> out;
  const json& a = o.array(key);
  for (size_t i = 0; i < a.size(); ++i) {
    if (!json_int_in(a[i], min, INT_MAX)) {
      o.fail(std::string(key) + "[" + std::to_string(i) + "]", "expected an integer >= " + std::to_string(min) + " (and < 2^31)");
    }
    out.push_back(a[i].get<int>());
  }
  return out;
}

std::vector<double> num_list(Obj& o, const char* key, bool allow_negative_one) {
  std::vector<double> out;
  const json& a = o.array(key);
  for (size_t i = 0; i < a.size(); ++i) {
    bool ok = a[i].is_number() && std::isfinite(a[i].get<double>()) &&
              (a[i].get<double>() >= 0 || (allow_negative_one && a[i].get<double>() == -1));
    if (!ok) {
      o.fail(std::string(key) + "[" + std::to_string(i) + "]",
             allow_negative_one ? "expected a non-negative number or -1" : "expected a non-negative number");
    }
    out.push_back(a[i].get<double>());
  }
  return out;
}

template <size_t N>
int index_of(const char* const (&names)[N], const std::string& s) {
  for (size_t i = 0; i < N; ++i) {
    if (s == names[i]) return static_cast<int>(i);
  }
  return -1;
}

json step_to_json(const PlanStep& s) {
  json j = {{"kind", step_kind_name(s.kind)}, {"phase", step_phase_name(s.phase)}};
  if (s.op >= 0) j["op"] = s.op;
  j["mb"] = s.micro_batch;
  j["what"] = s.what;
  if (s.comm_stream) j["stream"] = "comm";
  j["dtype"] = s.dtype;
  switch (s.kind) {
    case StepKind::gemm:
      j["m"] = s.m, j["n"] = s.n, j["k"] = s.k, j["batch"] = s.batch;
      if (s.conv) {
        const ConvGeometry& c = *s.conv;
        j["conv"] = {{"n", c.n}, {"c", c.c}, {"h", c.h}, {"w", c.w}, {"k", c.k}, {"r", c.r},
                     {"s", c.s}, {"p", c.p}, {"q", c.q}, {"stride", c.stride}, {"pad", c.pad}};
      }
      j["flops"] = s.flops;
      j["bytes"] = s.bytes;
      break;
    case StepKind::memory:
      j["flops"] = s.flops;
      j["bytes"] = s.bytes;
      j["kernels"] = s.kernels;
      break;
    case StepKind::collective:
      j["collective"] = s.collective;
      j["group"] = s.group;
      j["bytes"] = s.bytes;
      if (s.bucket >= 0) j["bucket"] = s.bucket;
      break;
    case StepKind::send:
    case StepKind::recv:
      j["group"] = s.group;
      j["peer"] = s.peer;
      j["bytes"] = s.bytes;
      break;
  }
  j["predicted_s"] = s.predicted_s;
  return j;
}

PlanStep step_from_json(const json& j, const std::string& source, const std::string& path,
                        int n_ops, int n_groups, int world) {
  Obj o(j, source, path);
  PlanStep s;
  s.kind = static_cast<StepKind>(index_of(kKindNames, o.one_of("kind", kKindNames, 5)));
  s.phase = static_cast<StepPhase>(index_of(kPhaseNames, o.one_of("phase", kPhaseNames, 4)));
  if (o.has("op")) {
    s.op = static_cast<int>(o.integer("op", 0));
    if (s.op >= n_ops) o.fail("op", "is not an index into ops");
  }
  s.micro_batch = static_cast<int>(o.integer("mb", 0));
  s.what = o.str("what");
  if (o.has("stream")) {
    if (o.str("stream") != "comm") o.fail("stream", "must be \"comm\" (compute is the default)");
    s.comm_stream = true;
  }
  s.dtype = o.one_of("dtype", kDtypes, 5);
  switch (s.kind) {
    case StepKind::gemm: {
      s.m = o.integer("m", 1), s.n = o.integer("n", 1), s.k = o.integer("k", 1);
      s.batch = o.integer("batch", 1);
      if (o.has("conv")) {
        Obj c(o.at("conv"), source, o.sub("conv"));
        ConvGeometry g;
        g.n = c.integer("n", 1), g.c = c.integer("c", 1), g.h = c.integer("h", 1), g.w = c.integer("w", 1);
        g.k = c.integer("k", 1), g.r = c.integer("r", 1), g.s = c.integer("s", 1);
        g.p = c.integer("p", 1), g.q = c.integer("q", 1);
        g.stride = c.integer("stride", 1), g.pad = c.integer("pad", 0);
        c.done();
        s.conv = g;
      }
      s.flops = o.num("flops");
      s.bytes = o.num("bytes");
      break;
    }
    case StepKind::memory:
      s.flops = o.num("flops");
      s.bytes = o.num("bytes");
      s.kernels = static_cast<int>(o.integer("kernels", 1));
      break;
    case StepKind::collective:
      s.collective = o.one_of("collective", kCollectives, 4);
      s.group = static_cast<int>(o.integer("group", 0));
      s.bytes = o.num("bytes");
      if (o.has("bucket")) s.bucket = static_cast<int>(o.integer("bucket", 0));
      break;
    case StepKind::send:
    case StepKind::recv:
      s.group = static_cast<int>(o.integer("group", 0));
      s.peer = static_cast<int>(o.integer("peer", 0));
      if (s.peer >= world) o.fail("peer", "is not a rank of the plan");
      s.bytes = o.num("bytes");
      break;
  }
  if (s.group >= n_groups) o.fail("group", "is not an index into groups");
  s.predicted_s = o.num("predicted_s");
  o.done();
  return s;
}

uint64_t fnv1a(uint64_t h, const std::string& s) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

const char* step_kind_name(StepKind k) { return kKindNames[static_cast<int>(k)]; }
const char* step_phase_name(StepPhase p) { return kPhaseNames[static_cast<int>(p)]; }

void to_json(json& j, const ValidationPlan& p) {
  json counts = json::object();
  for (const auto& [k, v] : p.count_by_kind) counts[k] = v;
  json groups = json::array();
  for (const PlanGroup& g : p.groups) groups.push_back({{"mesh_dim", g.mesh_dim}, {"ranks", g.ranks}});
  json ops = json::array();
  for (const PlanOp& o : p.ops) {
    ops.push_back({{"name", o.name}, {"kind", o.kind}, {"signature", o.signature}, {"stage", o.stage},
                   {"compute_s", o.compute_s}, {"comm_s", o.comm_s}, {"grad_sync_s", o.grad_sync_s}});
  }
  json ranks = json::array();
  for (const RankProgram& r : p.ranks) {
    json steps = json::array();
    for (const PlanStep& s : r.steps) steps.push_back(step_to_json(s));
    ranks.push_back({{"rank", r.rank}, {"coords", r.coords}, {"stage", r.stage}, {"steps", steps}});
  }
  j = {{"format", kPlanFormat},
       {"model", p.model},
       {"cluster", p.cluster},
       {"scheme", p.scheme},
       {"gpu", p.gpu},
       {"mesh", p.mesh_shape},
       {"pipeline_dim", p.pipeline_dim},
       {"stages", p.stages},
       {"micro_batches", p.micro_batches},
       {"world_size", p.world_size()},
       {"predicted",
        {{"iteration_s", p.iteration_s},
         {"compute_s", p.compute_s},
         {"comm_exposed_s", p.comm_exposed_s},
         {"grad_sync_s", p.grad_sync_s},
         {"bubble_s", p.bubble_s},
         {"count_by_kind", counts}}},
       {"groups", groups},
       {"ops", ops},
       {"ranks", ranks}};
}

ValidationPlan plan_from_json(const json& j, const std::string& source) {
  Obj o(j, source, "");
  if (o.str("format") != kPlanFormat) o.fail("format", std::string("expected \"") + kPlanFormat + "\"");
  ValidationPlan p;
  p.model = o.str("model");
  p.cluster = o.str("cluster");
  p.scheme = o.str("scheme");
  p.gpu = o.str("gpu");
  p.mesh_shape = int_list(o, "mesh", 1);
  if (p.mesh_shape.empty()) o.fail("mesh", "needs at least one dimension");
  p.pipeline_dim = static_cast<int>(o.integer("pipeline_dim", -1));
  if (p.pipeline_dim >= static_cast<int>(p.mesh_shape.size())) o.fail("pipeline_dim", "is not a mesh dimension");
  p.stages = static_cast<int>(o.integer("stages", 1));
  p.micro_batches = static_cast<int>(o.integer("micro_batches", 1));
  int world = static_cast<int>(o.integer("world_size", 1));
  int product = 1;
  for (int d : p.mesh_shape) product *= d;
  if (world != product) o.fail("world_size", "is not the product of the mesh sizes");

  Obj pred(o.at("predicted"), source, "predicted");
  p.iteration_s = pred.num("iteration_s");
  p.compute_s = pred.num("compute_s");
  p.comm_exposed_s = pred.num("comm_exposed_s");
  p.grad_sync_s = pred.num("grad_sync_s");
  p.bubble_s = pred.num("bubble_s");
  const json& counts = pred.at("count_by_kind");
  if (!counts.is_object()) pred.fail("count_by_kind", "expected an object");
  for (auto it = counts.begin(); it != counts.end(); ++it) {
    if (!it.value().is_number() || it.value().get<double>() < 0) {
      pred.fail("count_by_kind." + it.key(), "expected a non-negative number");
    }
    p.count_by_kind.emplace_back(it.key(), it.value().get<double>());
  }
  pred.done();

  const json& groups = o.array("groups");
  for (size_t i = 0; i < groups.size(); ++i) {
    Obj g(groups[i], source, o.item("groups", i));
    PlanGroup pg;
    pg.mesh_dim = static_cast<int>(g.integer("mesh_dim", 0));
    if (pg.mesh_dim >= static_cast<int>(p.mesh_shape.size())) g.fail("mesh_dim", "is not a mesh dimension");
    pg.ranks = int_list(g, "ranks", 0);
    if (pg.ranks.size() < 2) g.fail("ranks", "a group has at least 2 ranks");
    for (int r : pg.ranks) {
      if (r >= world) g.fail("ranks", "rank " + std::to_string(r) + " is not in the plan");
    }
    g.done();
    p.groups.push_back(std::move(pg));
  }
  const json& ops = o.array("ops");
  for (size_t i = 0; i < ops.size(); ++i) {
    Obj op(ops[i], source, o.item("ops", i));
    PlanOp po;
    po.name = op.str("name");
    po.kind = op.str("kind");
    po.signature = op.str("signature");
    po.stage = static_cast<int>(op.integer("stage", 0));
    po.compute_s = op.num("compute_s");
    po.comm_s = op.num("comm_s");
    po.grad_sync_s = op.num("grad_sync_s");
    op.done();
    p.ops.push_back(std::move(po));
  }
  const json& ranks = o.array("ranks");
  if (static_cast<int>(ranks.size()) != world) o.fail("ranks", "needs one program per rank of world_size");
  for (size_t i = 0; i < ranks.size(); ++i) {
    Obj r(ranks[i], source, o.item("ranks", i));
    RankProgram rp;
    rp.rank = static_cast<int>(r.integer("rank", 0));
    if (rp.rank != static_cast<int>(i)) r.fail("rank", "ranks must be listed in order 0, 1, ...");
    rp.coords = int_list(r, "coords", 0);
    if (rp.coords.size() != p.mesh_shape.size()) r.fail("coords", "needs one coordinate per mesh dimension");
    rp.stage = static_cast<int>(r.integer("stage", 0));
    const json& steps = r.array("steps");
    for (size_t k = 0; k < steps.size(); ++k) {
      rp.steps.push_back(step_from_json(steps[k], source, r.item("steps", k), static_cast<int>(p.ops.size()),
                                        static_cast<int>(p.groups.size()), world));
    }
    r.done();
    p.ranks.push_back(std::move(rp));
  }
  o.done();
  return p;
}

void to_json(json& j, const ValidationResult& r) {
  json versions = json::object();
  for (const auto& [k, v] : r.versions) versions[k] = v;
  json ranks = json::array();
  for (const RankMeasurement& m : r.ranks) {
    json jm = {{"rank", m.rank},
               {"device", m.device},
               {"step_s", m.step_s},
               {"step_kernel_s", m.step_kernel_s},
               {"iteration_s", m.iteration_s}};
    if (!m.stepped_iteration_s.empty()) jm["stepped_iteration_s"] = m.stepped_iteration_s;
    ranks.push_back(std::move(jm));
  }
  json timing = {{"warmup", r.warmup},
                 {"iters", r.iters},
                 {"cupti_iters", r.cupti_iters},
                 {"overlap_grad_sync", r.overlap_grad_sync}};
  if (!r.iteration_pass.empty()) timing["iteration_pass"] = r.iteration_pass;
  j = {{"format", kResultFormat},
       {"plan", {{"model", r.model}, {"cluster", r.cluster}, {"scheme", r.scheme}, {"fingerprint", r.fingerprint}}},
       {"skipped", r.skipped.empty() ? json(nullptr) : json(r.skipped)},
       {"provenance",
        {{"device", r.device}, {"date", r.date}, {"command", r.command}, {"host", r.host}, {"versions", versions}}},
       {"timing", timing},
       {"ranks", ranks}};
}

ValidationResult result_from_json(const json& j, const std::string& source) {
  Obj o(j, source, "");
  if (o.str("format") != kResultFormat) o.fail("format", std::string("expected \"") + kResultFormat + "\"");
  ValidationResult r;
  Obj plan(o.at("plan"), source, "plan");
  r.model = plan.str("model");
  r.cluster = plan.str("cluster");
  r.scheme = plan.str("scheme");
  r.fingerprint = plan.str("fingerprint");
  plan.done();
  if (!o.at("skipped").is_null()) {
    r.skipped = o.str("skipped");
    if (r.skipped.empty()) o.fail("skipped", "null or a reason");
  }
  Obj prov(o.at("provenance"), source, "provenance");
  r.device = prov.str("device");
  r.date = prov.str("date");
  r.command = prov.str("command");
  r.host = prov.str("host");
  const json& versions = prov.at("versions");
  if (!versions.is_object()) prov.fail("versions", "expected an object");
  for (auto it = versions.begin(); it != versions.end(); ++it) {
    if (!it.value().is_string()) prov.fail("versions." + it.key(), "expected a string");
    r.versions.emplace_back(it.key(), it.value().get<std::string>());
  }
  prov.done();
  Obj timing(o.at("timing"), source, "timing");
  r.warmup = static_cast<int>(timing.integer("warmup", 0));
  r.iters = static_cast<int>(timing.integer("iters", 0));
  r.cupti_iters = static_cast<int>(timing.integer("cupti_iters", 0));
  r.overlap_grad_sync = timing.boolean("overlap_grad_sync");
  if (timing.has("iteration_pass")) {
    constexpr const char* kPasses[] = {"stream", "graph"};
    r.iteration_pass = timing.one_of("iteration_pass", kPasses, 2);
  }
  timing.done();
  const json& ranks = o.array("ranks");
  for (size_t i = 0; i < ranks.size(); ++i) {
    Obj m(ranks[i], source, o.item("ranks", i));
    RankMeasurement rm;
    rm.rank = static_cast<int>(m.integer("rank", 0));
    if (rm.rank != static_cast<int>(i)) m.fail("rank", "ranks must be listed in order 0, 1, ...");
    rm.device = static_cast<int>(m.integer("device", 0));
    rm.step_s = num_list(m, "step_s", false);
    rm.step_kernel_s = num_list(m, "step_kernel_s", true);
    if (rm.step_kernel_s.size() != rm.step_s.size()) m.fail("step_kernel_s", "needs one entry per step");
    rm.iteration_s = num_list(m, "iteration_s", false);
    if (r.skipped.empty() && static_cast<int>(rm.iteration_s.size()) != r.iters) {
      m.fail("iteration_s", "needs one entry per timed iteration (timing.iters)");
    }
    if (m.has("stepped_iteration_s")) {
      rm.stepped_iteration_s = num_list(m, "stepped_iteration_s", false);
      if (rm.stepped_iteration_s.size() != rm.iteration_s.size()) {
        m.fail("stepped_iteration_s", "needs one entry per timed iteration, as iteration_s");
      }
    }
    m.done();
    r.ranks.push_back(std::move(rm));
  }
  if (o.has("comparison")) o.at("comparison");  // the runner's own table; recomputed from the plan
  if (r.skipped.empty() && (r.ranks.empty() || r.iters < 1)) {
    o.fail("ranks", "a result that was not skipped needs ranks and timed iterations");
  }
  o.done();
  return r;
}

ValidationPlan read_plan_file(const std::string& path) {
  const json j = read_json_file(path);
  return guard_json(path, [&] { return plan_from_json(j, path); });
}

std::string plan_fingerprint(const ValidationPlan& p) {
  uint64_t h = 1469598103934665603ull;
  auto add = [&](const std::string& s) { h = fnv1a(h, s + "|"); };
  auto num = [&](double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    add(buf);
  };
  for (int d : p.mesh_shape) num(d);
  num(p.pipeline_dim);
  for (const PlanGroup& g : p.groups) {
    num(g.mesh_dim);
    for (int r : g.ranks) num(r);
  }
  for (const PlanOp& o : p.ops) add(o.name);
  for (const RankProgram& r : p.ranks) {
    add("rank");
    for (const PlanStep& s : r.steps) {
      add(step_kind_name(s.kind));
      add(step_phase_name(s.phase));
      num(s.op), num(s.micro_batch), num(s.comm_stream);
      add(s.dtype);
      num(double(s.m)), num(double(s.n)), num(double(s.k)), num(double(s.batch));
      num(s.bytes), num(s.kernels), num(s.group), num(s.peer);
      add(s.collective);
    }
  }
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace autoddl::calib
