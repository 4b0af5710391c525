// Cluster JSON <-> ClusterSpec, with strict checking (Calculon's systems/*.json loader checks the
// exact key set and ranges; we also keep each number's citation). Every number may be written
// plain or as {"value": x, "source": "..."}; citations are kept in ClusterSpec::sources by field
// path ("gpu.memory_bytes", "gpu.matmul_efficiency", "gpu.matmul_efficiency[2].flops") and
// written back by cluster_to_json, so a load/save round trip is exact. Schema: docs/cluster-json.md.
#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/calibration.hpp"

#include <charconv>
#include <cmath>
#include <string_view>
#include <utility>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"

namespace autoddl::costmodel {

using nlohmann::json;

namespace {

// Shortest text that reads back as x ("-1", "2.5", "1e+09").
std::string fmt(double x) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, end);
}

std::string join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

// Reads one cluster object, collecting citations; every complaint names source and field.
class Reader {
 public:
  Reader(std::string source, std::map<std::string, std::string>& sources)
      : source_(std::move(source)), sources_(sources) {}

  [[noreturn]] void fail(const std::string& field, const std::string& reason) const {
    throw InputError(source_, field, reason);
  }

  // `j` must be an object whose keys are all in required + optional, with every required one.
  const json& object(const json& j, const std::string& path,
                     std::initializer_list<std::string_view> required,
                     std::initializer_list<std::string_view> optional = {}) const {
    if (!j.is_object()) fail(path, std::string("must be an object (got ") + j.type_name() + ")");
    for (const auto& [key, value] : j.items()) {
      bool known = false;
      for (auto list : {required, optional}) {
        for (std::string_view k : list) known = known || k == key;
      }
      if (!known) {
        std::string allowed;
        for (auto list : {required, optional}) {
          for (std::string_view k : list) allowed += (allowed.empty() ? "" : ", ") + std::string(k);
        }
        fail(join(path, key), "unknown key (allowed: " + allowed + ")");
      }
    }
    for (std::string_view k : required) {
      if (!j.contains(k)) fail(join(path, k), "missing");
    }
    return j;
  }

  // The value of a plain or {"value", "source"} entry; records the citation under `field`.
  const json& unwrap(const json& j, const std::string& field) const {
    if (!j.is_object() || !j.contains("value")) return j;
    object(j, field, {"value", "source"});
    const json& src = j.at("source");
    if (!src.is_string() || src.get<std::string>().empty()) {
      fail(field + ".source", "must be a non-empty string");
    }
    sources_[field] = src.get<std::string>();
    return j.at("value");
  }

  double number(const json& parent, const std::string& path, std::string_view key) const {
    std::string field = join(path, key);
    const json& v = unwrap(parent.at(key), field);
    if (!v.is_number()) fail(field, std::string("must be a number (got ") + v.type_name() + ")");
    return v.get<double>();
  }

  // A number that must lie in [lo, hi].
  double number_in(const json& parent, const std::string& path, std::string_view key, double lo, double hi) const {
    const double x = number(parent, path, key);
    at_least(x, lo, join(path, key));
    at_most(x, hi, join(path, key));
    return x;
  }

  int integer(const json& parent, const std::string& path, std::string_view key) const {
    std::string field = join(path, key);
    double x = number(parent, path, key);
    if (x != std::floor(x)) fail(field, "must be an integer (got " + fmt(x) + ")");
    if (std::abs(x) > 1e9) fail(field, "must be at most 1e9 in size (got " + fmt(x) + ")");
    return int(x);
  }

  std::string text(const json& parent, const std::string& path, std::string_view key) const {
    const json& v = parent.at(key);
    if (!v.is_string()) {
      fail(join(path, key), std::string("must be a string (got ") + v.type_name() + ")");
    }
    return v.get<std::string>();
  }

  // Range checks: the field is already read, these only complain.
  void positive(double x, const std::string& field) const {
    if (!(x > 0)) fail(field, "must be > 0 (got " + fmt(x) + ")");
  }
  void non_negative(double x, const std::string& field) const {
    if (!(x >= 0)) fail(field, "must be >= 0 (got " + fmt(x) + ")");
  }
  void at_least(double x, double lo, const std::string& field) const {
    if (!(x >= lo)) fail(field, "must be >= " + fmt(lo) + " (got " + fmt(x) + ")");
  }
  // Physical plausibility: bounds far outside any real machine, so that times stay finite.
  void at_most(double x, double hi, const std::string& field) const {
    if (!(x <= hi)) fail(field, "must be <= " + fmt(hi) + " (got " + fmt(x) + ")");
  }
  void fraction(double x, const std::string& field) const {
    if (!(x > 0 && x <= 1)) fail(field, "must be in (0, 1] (got " + fmt(x) + ")");
  }
  void one_of(const std::string& x, std::initializer_list<std::string_view> options,
              const std::string& field) const {
    std::string list;
    for (std::string_view o : options) {
      if (o == x) return;
      list += (list.empty() ? "" : ", ") + std::string(o);
    }
    fail(field, "must be one of " + list + " (got \"" + x + "\")");
  }

  std::vector<EfficiencyPoint> table(const json& parent, const std::string& path,
                                     std::string_view key, const char* x = "flops") const {
    std::string field = join(path, key);
    const json& v = unwrap(parent.at(key), field);
    if (!v.is_array() || v.empty()) {
      fail(field, std::string("must be a non-empty array of {" + std::string(x) + ", efficiency} (got ") +
                      (v.is_array() ? "an empty array" : v.type_name()) + ")");
    }
    std::vector<EfficiencyPoint> points;
    for (size_t i = 0; i < v.size(); ++i) {
      std::string at = field + "[" + std::to_string(i) + "]";
      object(v[i], at, {x, "efficiency"});
      EfficiencyPoint pt{number(v[i], at, x), number(v[i], at, "efficiency")};
      positive(pt.flops, at + "." + x);
      fraction(pt.efficiency, at + ".efficiency");
      if (!points.empty() && !(pt.flops > points.back().flops)) {
        fail(at + "." + x, "points must be sorted by strictly increasing " + std::string(x) + " (got " +
                                fmt(pt.flops) + " after " + fmt(points.back().flops) + ")");
      }
      points.push_back(pt);
    }
    return points;
  }

 private:
  std::string source_;
  std::map<std::string, std::string>& sources_;
};

// The GPU's optional efficiency tables, each with its key and axis ("flops" or "seq"): read and
// written by one list.
struct OptionalTable {
  const char* key;
  std::vector<EfficiencyPoint> GpuSpec::*table;
  const char* axis;
};
constexpr OptionalTable kOptionalTables[] = {
    {"matmul_efficiency_fp8", &GpuSpec::matmul_efficiency_fp8, "flops"},
    {"matmul_efficiency_fp32", &GpuSpec::matmul_efficiency_fp32, "flops"},
    {"conv_efficiency_fp32", &GpuSpec::conv_efficiency_fp32, "flops"},
    {"attention_efficiency_fwd", &GpuSpec::attention_efficiency_fwd, "seq"},
    {"attention_efficiency_bwd", &GpuSpec::attention_efficiency_bwd, "seq"},
    {"attention_efficiency_bwd_causal", &GpuSpec::attention_efficiency_bwd_causal, "seq"},
};

// The optional memory-bound kernel rates (GpuSpec::norm_fwd_rate ...), fractions of the
// streaming rate.
constexpr std::pair<const char*, double GpuSpec::*> kMemoryRates[] = {
    {"norm_fwd_rate", &GpuSpec::norm_fwd_rate}, {"norm_bwd_rate", &GpuSpec::norm_bwd_rate},
    {"loss_fwd_rate", &GpuSpec::loss_fwd_rate}, {"loss_bwd_rate", &GpuSpec::loss_bwd_rate},
    {"optimizer_rate", &GpuSpec::optimizer_rate},
};

GpuSpec read_gpu(const Reader& r, const json& j) {
  const std::string p = "gpu";
  r.object(j, p,
           {"name", "peak_flops_fp32", "peak_flops_fp16", "peak_flops_bf16", "memory_bytes",
            "hbm_bytes_per_s", "hbm_efficiency", "launch_overhead_s", "matmul_efficiency",
            "conv_efficiency"},
           {"peak_flops_fp8", "memory_reserve_bytes", "matmul_efficiency_fp8", "matmul_efficiency_fp32", "conv_efficiency_fp32",
            "attention_efficiency_fwd", "attention_efficiency_bwd", "attention_efficiency_bwd_causal",
            "attention_reference_tiles", "attention_tail_waves", "sm_count", "norm_fwd_rate", "norm_bwd_rate",
            "loss_fwd_rate", "loss_bwd_rate", "optimizer_rate"});
  GpuSpec g;
  g.name = r.text(j, p, "name");
  if (g.name.empty()) r.fail("gpu.name", "must not be empty");
  for (auto [key, dst] : {std::pair{"peak_flops_fp32", &g.peak_flops_fp32},
                          {"peak_flops_fp16", &g.peak_flops_fp16},
                          {"peak_flops_bf16", &g.peak_flops_bf16},
                          {"memory_bytes", &g.memory_bytes},
                          {"hbm_bytes_per_s", &g.hbm_bytes_per_s}}) {
    *dst = r.number(j, p, key);
    r.positive(*dst, join(p, key));
    r.at_least(*dst, 1e3, join(p, key));
    r.at_most(*dst, 1e21, join(p, key));
  }
  if (j.contains("peak_flops_fp8")) {
    g.peak_flops_fp8 = r.number(j, p, "peak_flops_fp8");
    r.positive(g.peak_flops_fp8, "gpu.peak_flops_fp8");
    r.at_least(g.peak_flops_fp8, 1e3, "gpu.peak_flops_fp8");
    r.at_most(g.peak_flops_fp8, 1e21, "gpu.peak_flops_fp8");
  }
  if (j.contains("memory_reserve_bytes")) {
    g.memory_reserve_bytes = r.number(j, p, "memory_reserve_bytes");
    r.non_negative(g.memory_reserve_bytes, "gpu.memory_reserve_bytes");
    if (!(g.memory_reserve_bytes < g.memory_bytes)) r.fail("gpu.memory_reserve_bytes", "must be less than gpu.memory_bytes");
  }
  if (j.contains("sm_count")) {
    g.sm_count = r.integer(j, p, "sm_count");
    r.at_least(g.sm_count, 1, "gpu.sm_count");
    r.at_most(g.sm_count, 100000, "gpu.sm_count");
  }
  g.hbm_efficiency = r.number(j, p, "hbm_efficiency");
  r.fraction(g.hbm_efficiency, "gpu.hbm_efficiency");
  g.launch_overhead_s = r.number(j, p, "launch_overhead_s");
  r.non_negative(g.launch_overhead_s, "gpu.launch_overhead_s");
  r.at_most(g.launch_overhead_s, 1, "gpu.launch_overhead_s");
  g.matmul_efficiency = r.table(j, p, "matmul_efficiency");
  g.conv_efficiency = r.table(j, p, "conv_efficiency");
  for (const OptionalTable& t : kOptionalTables) {
    if (j.contains(t.key)) g.*t.table = r.table(j, p, t.key, t.axis);
  }
  if (j.contains("attention_reference_tiles") != j.contains("attention_tail_waves")) {
    r.fail("gpu.attention_tail_waves", "attention_reference_tiles and attention_tail_waves go together");
  }
  if (j.contains("attention_reference_tiles")) {
    g.attention_reference_tiles = r.number_in(j, p, "attention_reference_tiles", 1, 1e9);
    g.attention_tail_waves = r.number_in(j, p, "attention_tail_waves", 0, 100);
    if (g.sm_count <= 0) r.fail("gpu.sm_count", "attention_reference_tiles needs sm_count (tiles per SM)");
  }
  for (const auto& [key, field] : kMemoryRates) {
    if (j.contains(key)) g.*field = r.number_in(j, p, key, 1e-3, 2);
  }
  return g;
}

IntraNodeSpec read_intra(const Reader& r, const json& j) {
  const std::string p = "intra";
  r.object(j, p, {"fabric", "bw_bytes_per_s", "latency_s", "efficiency"});
  IntraNodeSpec s;
  s.fabric = r.text(j, p, "fabric");
  r.one_of(s.fabric, {"nvswitch", "nvlink", "pcie", "none"}, "intra.fabric");
  s.bw_bytes_per_s = r.number(j, p, "bw_bytes_per_s");
  if (s.fabric == "none") {
    r.non_negative(s.bw_bytes_per_s, "intra.bw_bytes_per_s");
  } else {
    r.positive(s.bw_bytes_per_s, "intra.bw_bytes_per_s");
    r.at_least(s.bw_bytes_per_s, 1e3, "intra.bw_bytes_per_s");
  }
  r.at_most(s.bw_bytes_per_s, 1e16, "intra.bw_bytes_per_s");
  s.latency_s = r.number(j, p, "latency_s");
  r.non_negative(s.latency_s, "intra.latency_s");
  r.at_most(s.latency_s, 1, "intra.latency_s");
  s.efficiency = r.number(j, p, "efficiency");
  r.fraction(s.efficiency, "intra.efficiency");
  return s;
}

InterNodeSpec read_inter(const Reader& r, const json& j) {
  const std::string p = "inter";
  r.object(j, p,
           {"nics_per_node", "nic_bw_bytes_per_s", "latency_s", "efficiency", "topology",
            "oversubscription"});
  InterNodeSpec s;
  s.nics_per_node = r.integer(j, p, "nics_per_node");
  r.at_least(s.nics_per_node, 1, "inter.nics_per_node");
  s.nic_bw_bytes_per_s = r.number(j, p, "nic_bw_bytes_per_s");
  r.positive(s.nic_bw_bytes_per_s, "inter.nic_bw_bytes_per_s");
  r.at_least(s.nic_bw_bytes_per_s, 1e3, "inter.nic_bw_bytes_per_s");
  r.at_most(s.nic_bw_bytes_per_s, 1e16, "inter.nic_bw_bytes_per_s");
  s.latency_s = r.number(j, p, "latency_s");
  r.non_negative(s.latency_s, "inter.latency_s");
  r.at_most(s.latency_s, 1, "inter.latency_s");
  s.efficiency = r.number(j, p, "efficiency");
  r.fraction(s.efficiency, "inter.efficiency");
  s.topology = r.text(j, p, "topology");
  r.one_of(s.topology, {"star", "fat-tree"}, "inter.topology");
  s.oversubscription = r.number(j, p, "oversubscription");
  r.at_least(s.oversubscription, 1, "inter.oversubscription");
  r.at_most(s.oversubscription, 1e3, "inter.oversubscription");
  return s;
}

// A number, with its citation when it has one.
json cited(const ClusterSpec& c, const std::string& field, const json& value) {
  auto it = c.sources.find(field);
  if (it == c.sources.end()) return value;
  return json{{"value", value}, {"source", it->second}};
}

json table_json(const ClusterSpec& c, const std::string& field,
                const std::vector<EfficiencyPoint>& table, const char* x = "flops") {
  json points = json::array();
  for (size_t i = 0; i < table.size(); ++i) {
    std::string at = field + "[" + std::to_string(i) + "]";
    points.push_back({{x, cited(c, at + "." + x, table[i].flops)},
                      {"efficiency", cited(c, at + ".efficiency", table[i].efficiency)}});
  }
  return cited(c, field, points);
}

}  // namespace

double interpolate_efficiency(const std::vector<EfficiencyPoint>& table, double flops) {
  if (table.empty()) return 1.0;
  if (flops <= table.front().flops) return table.front().efficiency;
  if (flops >= table.back().flops) return table.back().efficiency;
  size_t hi = 1;
  while (table[hi].flops < flops) ++hi;
  const EfficiencyPoint& a = table[hi - 1];
  const EfficiencyPoint& b = table[hi];
  double t = (std::log10(flops) - std::log10(a.flops)) / (std::log10(b.flops) - std::log10(a.flops));
  return a.efficiency + t * (b.efficiency - a.efficiency);
}

double GpuSpec::peak_flops(DType t) const {
  switch (t) {
    case DType::fp16: return peak_flops_fp16;
    case DType::bf16: return peak_flops_bf16;
    case DType::fp8: return peak_flops_fp8;
    default: return peak_flops_fp32;
  }
}

constexpr double kMinNvlinkGBps = 1, kMaxNvlinkGBps = 1e5;

NcclSpec read_nccl(const Reader& r, const json& j) {
  const std::string p = "nccl";
  r.object(j, p, {"arch", "nvlink_bw_GBps", "nvls", "cpu_vendor"});
  NcclSpec s;
  s.arch = r.text(j, p, "arch");
  r.one_of(s.arch, {"volta", "ampere", "hopper", "blackwell"}, "nccl.arch");
  s.nvlink_bw_GBps = r.number(j, p, "nvlink_bw_GBps");
  // 0 (no NVLink) or a physical NVLink: one link carries about 20 GB/s in NCCL's units. A
  // positive speed far below any link (1e-100) gave NCCL's model a graph of no bandwidth at all.
  if (!(s.nvlink_bw_GBps == 0 || (s.nvlink_bw_GBps >= kMinNvlinkGBps && s.nvlink_bw_GBps <= kMaxNvlinkGBps))) {
    r.fail("nccl.nvlink_bw_GBps", "must be 0 (PCIe only) or in [" + fmt(kMinNvlinkGBps) + ", " + fmt(kMaxNvlinkGBps) +
                                      "] (got " + fmt(s.nvlink_bw_GBps) + ")");
  }
  const json& nvls = r.unwrap(j.at("nvls"), "nccl.nvls");
  if (!nvls.is_boolean()) r.fail("nccl.nvls", std::string("must be true or false (got ") + nvls.type_name() + ")");
  s.nvls = nvls.get<bool>();
  if (s.nvls && (s.arch == "volta" || s.arch == "ampere")) {
    r.fail("nccl.nvls", "NVLink SHARP needs a Hopper or later GPU (arch is \"" + s.arch + "\")");
  }
  if (s.nvls && s.nvlink_bw_GBps <= 0) r.fail("nccl.nvls", "NVLink SHARP needs NVLink (nvlink_bw_GBps is 0)");
  s.cpu_vendor = r.text(j, p, "cpu_vendor");
  // NCCL tunes its multi-node LL rate and network overhead by CPU vendor, AMD or not (tuning.cc:
  // index1 is 1 only for AMD or mixed), so Arm (Grace) takes the Intel rows.
  r.one_of(s.cpu_vendor, {"intel", "amd", "arm"}, "nccl.cpu_vendor");
  return s;
}

ClusterSpec cluster_from_json(const json& j, const std::string& source) {
  ClusterSpec c;
  Reader r(source, c.sources);
  r.object(j, "", {"name", "description", "nodes", "gpus_per_node", "gpu", "intra", "inter"},
           {"calibration_file", "nccl"});
  c.name = r.text(j, "", "name");
  if (c.name.empty()) r.fail("name", "must not be empty");
  c.description = r.text(j, "", "description");
  c.nodes = r.integer(j, "", "nodes");
  r.at_least(c.nodes, 1, "nodes");
  c.gpus_per_node = r.integer(j, "", "gpus_per_node");
  r.at_least(c.gpus_per_node, 1, "gpus_per_node");
  if (int64_t{c.nodes} * c.gpus_per_node > ClusterSpec::kMaxGpus) {
    r.fail("nodes", "nodes x gpus_per_node must be at most " + std::to_string(ClusterSpec::kMaxGpus));
  }
  c.gpu = read_gpu(r, j.at("gpu"));
  c.intra = read_intra(r, j.at("intra"));
  c.inter = read_inter(r, j.at("inter"));
  if (j.contains("nccl")) c.nccl = read_nccl(r, j.at("nccl"));
  if (j.contains("calibration_file")) c.calibration_file = r.text(j, "", "calibration_file");
  if (c.gpus_per_node > 1 && c.intra.fabric == "none") {
    r.fail("intra.fabric", "must not be \"none\" with gpus_per_node " +
                               std::to_string(c.gpus_per_node) + " (> 1 GPU per node needs a fabric)");
  }
  return c;
}

json cluster_to_json(const ClusterSpec& c) {
  const GpuSpec& g = c.gpu;
  json j = {
      {"name", c.name},
      {"description", c.description},
      {"nodes", cited(c, "nodes", c.nodes)},
      {"gpus_per_node", cited(c, "gpus_per_node", c.gpus_per_node)},
      {"gpu",
       {{"name", g.name},
        {"peak_flops_fp32", cited(c, "gpu.peak_flops_fp32", g.peak_flops_fp32)},
        {"peak_flops_fp16", cited(c, "gpu.peak_flops_fp16", g.peak_flops_fp16)},
        {"peak_flops_bf16", cited(c, "gpu.peak_flops_bf16", g.peak_flops_bf16)},
        {"memory_bytes", cited(c, "gpu.memory_bytes", g.memory_bytes)},
        {"hbm_bytes_per_s", cited(c, "gpu.hbm_bytes_per_s", g.hbm_bytes_per_s)},
        {"hbm_efficiency", cited(c, "gpu.hbm_efficiency", g.hbm_efficiency)},
        {"launch_overhead_s", cited(c, "gpu.launch_overhead_s", g.launch_overhead_s)},
        {"matmul_efficiency", table_json(c, "gpu.matmul_efficiency", g.matmul_efficiency)},
        {"conv_efficiency", table_json(c, "gpu.conv_efficiency", g.conv_efficiency)}}},
      {"intra",
       {{"fabric", c.intra.fabric},
        {"bw_bytes_per_s", cited(c, "intra.bw_bytes_per_s", c.intra.bw_bytes_per_s)},
        {"latency_s", cited(c, "intra.latency_s", c.intra.latency_s)},
        {"efficiency", cited(c, "intra.efficiency", c.intra.efficiency)}}},
      {"inter",
       {{"nics_per_node", cited(c, "inter.nics_per_node", c.inter.nics_per_node)},
        {"nic_bw_bytes_per_s", cited(c, "inter.nic_bw_bytes_per_s", c.inter.nic_bw_bytes_per_s)},
        {"latency_s", cited(c, "inter.latency_s", c.inter.latency_s)},
        {"efficiency", cited(c, "inter.efficiency", c.inter.efficiency)},
        {"topology", c.inter.topology},
        {"oversubscription", cited(c, "inter.oversubscription", c.inter.oversubscription)}}},
  };
  if (g.peak_flops_fp8 > 0) j["gpu"]["peak_flops_fp8"] = cited(c, "gpu.peak_flops_fp8", g.peak_flops_fp8);
  if (g.sm_count > 0) j["gpu"]["sm_count"] = cited(c, "gpu.sm_count", g.sm_count);
  if (g.memory_reserve_bytes > 0) {
    j["gpu"]["memory_reserve_bytes"] = cited(c, "gpu.memory_reserve_bytes", g.memory_reserve_bytes);
  }
  for (const OptionalTable& t : kOptionalTables) {
    const std::vector<EfficiencyPoint>& table = g.*t.table;
    if (!table.empty()) j["gpu"][t.key] = table_json(c, std::string("gpu.") + t.key, table, t.axis);
  }
  for (const auto& [key, field] : kMemoryRates) {
    if (g.*field > 0) j["gpu"][key] = cited(c, std::string("gpu.") + key, g.*field);
  }
  if (g.attention_reference_tiles > 0) {
    j["gpu"]["attention_reference_tiles"] = cited(c, "gpu.attention_reference_tiles", g.attention_reference_tiles);
    j["gpu"]["attention_tail_waves"] = cited(c, "gpu.attention_tail_waves", g.attention_tail_waves);
  }
  if (c.nccl) {
    j["nccl"] = {{"arch", c.nccl->arch},
                 {"nvlink_bw_GBps", cited(c, "nccl.nvlink_bw_GBps", c.nccl->nvlink_bw_GBps)},
                 {"nvls", cited(c, "nccl.nvls", c.nccl->nvls)},
                 {"cpu_vendor", c.nccl->cpu_vendor}};
  }
  if (!c.calibration_file.empty()) j["calibration_file"] = c.calibration_file;
  return j;
}

ClusterSpec load_cluster_file(const std::string& path) {
  const nlohmann::json j = read_json_file(path);
  ClusterSpec c = guard_json(path, [&] { return cluster_from_json(j, path); });
  const size_t slash = path.find_last_of('/');
  attach_calibration(c, slash == std::string::npos ? "." : path.substr(0, slash));
  return c;
}

}  // namespace autoddl::costmodel
