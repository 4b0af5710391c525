// Calibration lookup and its strict JSON form (see calibration.hpp, docs/calibration-json.md).
// Collective tables are interpolated in log-size and log-time: exact for the power laws a
// collective follows at either end (flat latency, linear bandwidth), close in between.
#include "autoddl/costmodel/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"

namespace autoddl::costmodel {

namespace {

constexpr std::string_view kFormat = "autoddl-calibration/1";

// A JSON object read field by field; finish() rejects the keys nobody asked for.
class Fields {
 public:
  Fields(const nlohmann::json& j, std::string source, std::string path)
      : j_(j), source_(std::move(source)), path_(std::move(path)) {
    if (!j_.is_object()) fail("", "expected a JSON object");
  }

  [[noreturn]] void fail(const std::string& key, const std::string& reason) const {
    std::string field = path_;
    if (!key.empty()) {
      if (!field.empty()) field += '.';
      field += key;
    }
    throw InputError(source_, field.empty() ? "(top level)" : field, reason);
  }
  std::string child(const std::string& key) const {
    return path_.empty() ? key : path_ + "." + key;
  }
  bool has(const std::string& key) const { return j_.contains(key); }

  const nlohmann::json& get(const std::string& key) {
    used_.insert(key);
    auto it = j_.find(key);
    if (it == j_.end()) fail(key, "missing");
    return *it;
  }
  double number(const std::string& key, double min_value, double max_value) {
    const nlohmann::json& v = get(key);
    if (!v.is_number()) fail(key, "expected a number");
    double x = v.get<double>();
    if (!std::isfinite(x) || x < min_value || x > max_value) {
      fail(key, "out of range [" + fmt(min_value) + ", " + fmt(max_value) + "]: " + fmt(x));
    }
    return x;
  }
  int optional_integer(const std::string& key, int min_value, int max_value, int absent) {
    return has(key) ? integer(key, min_value, max_value) : absent;
  }
  std::optional<double> optional_number(const std::string& key, double min_value,
                                        double max_value) {
    if (!has(key)) return std::nullopt;
    return number(key, min_value, max_value);
  }
  int integer(const std::string& key, int min_value, int max_value) {
    const nlohmann::json& v = get(key);
    if (!v.is_number_integer()) fail(key, "expected an integer");
    int64_t x = v.get<int64_t>();
    if (x < min_value || x > max_value) {
      fail(key, "out of range [" + std::to_string(min_value) + ", " + std::to_string(max_value) +
                    "]: " + std::to_string(x));
    }
    return static_cast<int>(x);
  }
  std::string string(const std::string& key) {
    const nlohmann::json& v = get(key);
    if (!v.is_string()) fail(key, "expected a string");
    return v.get<std::string>();
  }
  const nlohmann::json& array(const std::string& key) {
    const nlohmann::json& v = get(key);
    if (!v.is_array()) fail(key, "expected an array");
    return v;
  }
  void finish() const {
    for (auto it = j_.begin(); it != j_.end(); ++it) {
      if (!used_.count(it.key())) fail(it.key(), "unknown key");
    }
  }

  static std::string fmt(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", x);
    return buf;
  }

 private:
  const nlohmann::json& j_;
  std::string source_;
  std::string path_;
  std::set<std::string> used_;
};

std::string indexed(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

// A [x, y] pair of positive numbers inside an array.
std::pair<double, double> read_pair(const nlohmann::json& v, const std::string& source,
                                    const std::string& path) {
  if (!v.is_array() || v.size() != 2 || !v[0].is_number() || !v[1].is_number()) {
    throw InputError(source, path, "expected a pair [number, number]");
  }
  return {v[0].get<double>(), v[1].get<double>()};
}

FitQuality read_fit(const nlohmann::json& j, const std::string& source, const std::string& path) {
  Fields f(j, source, path);
  FitQuality q;
  q.points = f.integer("points", 1, 1 << 30);
  q.r2 = f.number("r2", -1e300, 1);
  q.max_rel_error = f.number("max_rel_error", 0, 1e300);
  q.mean_rel_error = f.number("mean_rel_error", 0, 1e300);
  q.holdout_rel_error = f.optional_number("holdout_rel_error", 0, 1e300);
  f.finish();
  return q;
}

CollectiveCalibration read_collective(const nlohmann::json& j, const std::string& source,
                                      const std::string& path) {
  Fields f(j, source, path);
  CollectiveCalibration c;
  std::string kind = f.string("kind");
  const CollectiveInfo* info = find_collective(kind);
  if (!info) f.fail("kind", "unknown collective '" + kind + "'");
  c.kind = info->kind;
  c.group.ranks = f.integer("ranks", 1, 1 << 24);
  c.group.ranks_per_node = f.integer("ranks_per_node", 1, c.group.ranks);
  c.groups_per_node = f.optional_integer("groups_per_node", 1, 1 << 24, 1);
  c.source = f.string("source");

  const nlohmann::json& bands = f.array("bands");
  for (size_t i = 0; i < bands.size(); ++i) {
    std::string bpath = indexed(f.child("bands"), i);
    Fields b(bands[i], source, bpath);
    AlphaBetaBand band;
    band.from_bytes = b.number("from_bytes", 0, 1e300);
    band.alpha_s = b.number("alpha_s", 0, 1e300);
    band.beta_s_per_byte = b.number("beta_s_per_byte", 0, 1e300);
    if (band.alpha_s == 0 && band.beta_s_per_byte == 0) {
      b.fail("", "alpha_s and beta_s_per_byte are both 0");
    }
    if (b.has("fit")) band.fit = read_fit(b.get("fit"), source, b.child("fit"));
    b.finish();
    if (i == 0 && band.from_bytes != 0) b.fail("from_bytes", "the first band must start at 0");
    if (i > 0 && band.from_bytes <= c.bands.back().from_bytes) {
      b.fail("from_bytes", "bands must be sorted by strictly increasing from_bytes");
    }
    c.bands.push_back(band);
  }

  const nlohmann::json& measured = f.array("measured");
  for (size_t i = 0; i < measured.size(); ++i) {
    std::string mpath = indexed(f.child("measured"), i);
    auto [bytes, time_s] = read_pair(measured[i], source, mpath);
    if (!(bytes > 0) || !(time_s > 0) || !std::isfinite(bytes) || !std::isfinite(time_s)) {
      throw InputError(source, mpath, "bytes and time_s must be positive");
    }
    if (!c.measured.empty() && bytes <= c.measured.back().bytes) {
      throw InputError(source, mpath, "bytes must be strictly increasing");
    }
    c.measured.push_back({bytes, time_s});
  }
  if (c.bands.empty() && c.measured.empty()) f.fail("", "needs bands or measured points");
  f.finish();
  return c;
}

LinkTierCalibration read_link_tier(const nlohmann::json& j, const std::string& source,
                                   const std::string& path) {
  Fields f(j, source, path);
  LinkTierCalibration t;
  const std::string tier = f.string("tier");
  if (tier != "intra_node" && tier != "inter_node") {
    f.fail("tier", "expected \"intra_node\" or \"inter_node\"");
  }
  t.inter_node = tier == "inter_node";
  if (t.inter_node) t.ranks_per_node = f.integer("ranks_per_node", 1, 1 << 24);
  t.groups_per_node = f.integer("groups_per_node", 1, 1 << 24);
  t.fixed_s = f.number("fixed_s", 0, 1e300);
  t.alpha_s = f.number("alpha_s", 0, 1e300);
  t.beta_s_per_byte = f.number("beta_s_per_byte", 0, 1e300);
  if (t.fixed_s == 0 && t.alpha_s == 0 && t.beta_s_per_byte == 0) {
    f.fail("", "fixed_s, alpha_s and beta_s_per_byte are all 0");
  }
  t.shapes = f.integer("shapes", 1, 1 << 30);
  t.mean_rel_error = f.number("mean_rel_error", 0, 1e300);
  t.holdout_rel_error = f.optional_number("holdout_rel_error", 0, 1e300);
  f.finish();
  return t;
}

NcclModelCalibration read_nccl_tier(const nlohmann::json& j, const std::string& source, const std::string& path) {
  Fields f(j, source, path);
  NcclModelCalibration t;
  const std::string tier = f.string("tier");
  if (tier != "intra_node" && tier != "inter_node") f.fail("tier", "expected \"intra_node\" or \"inter_node\"");
  t.inter_node = tier == "inter_node";
  if (t.inter_node) {
    t.ranks_per_node = f.integer("ranks_per_node", 1, 1 << 24);
    t.groups_per_node = f.integer("groups_per_node", 1, 1 << 24);
  }
  t.bw_efficiency = f.number("bw_efficiency", 1e-3, 10);
  t.latency_offset_s = f.number("latency_offset_s", -1, 1);
  t.shapes = f.integer("shapes", 1, 1 << 30);
  t.points = f.integer("points", 1, 1 << 30);
  if (f.has("protocols")) {
    const nlohmann::json& protocols = f.array("protocols");
    for (size_t i = 0; i < protocols.size(); ++i) {
      const std::string at = f.child("protocols") + "[" + std::to_string(i) + "]";
      Fields pf(protocols[i], source, at);
      const std::string name = pf.string("protocol");
      const std::optional<NcclProto> proto = parse_nccl_proto(name);
      if (!proto || nccl_proto_name(*proto) != name) pf.fail("protocol", "expected \"LL\", \"LL128\" or \"Simple\"");
      NcclModelCalibration::Protocol& p = t.protocols[size_t(*proto)];
      if (p.fitted) pf.fail("protocol", "\"" + name + "\" appears twice");
      p.fitted = true;
      p.bw_efficiency = pf.number("bw_efficiency", 1e-3, 10);
      p.latency_offset_s = pf.number("latency_offset_s", -1, 1);
      p.points = pf.integer("points", 1, t.points);
      pf.finish();
    }
  }
  t.attributed_points = f.integer("attributed_points", 0, t.points);
  t.mean_rel_error = f.number("mean_rel_error", 0, 1e300);
  t.holdout_rel_error = f.optional_number("holdout_rel_error", 0, 1e300);
  f.finish();
  return t;
}

// Each add_* appends an entry read at `path`, refusing the first that repeats an earlier key.
void add_nccl_tier(Calibration& c, const NcclModelCalibration& t, const std::string& source, const std::string& path) {
  for (const NcclModelCalibration& o : c.nccl_model) {
    if (o.inter_node == t.inter_node && o.ranks_per_node == t.ranks_per_node && o.groups_per_node == t.groups_per_node) {
      throw InputError(source, path, "duplicate tier");
    }
  }
  c.nccl_model.push_back(t);
}

void add_link_tier(Calibration& c, const LinkTierCalibration& t, const std::string& source, const std::string& path) {
  for (const LinkTierCalibration& o : c.link_tiers) {
    if (o.inter_node == t.inter_node && o.ranks_per_node == t.ranks_per_node && o.groups_per_node == t.groups_per_node) {
      throw InputError(source, path, "duplicate link tier");
    }
  }
  c.link_tiers.push_back(t);
}

void read_nccl_model(const nlohmann::json& j, const std::string& source, Calibration& c) {
  Fields f(j, source, "nccl_model");
  Fields b(f.get("fitted_against"), source, "nccl_model.fitted_against");
  c.nccl_basis.cluster = b.string("cluster");
  c.nccl_basis.arch = b.string("arch");
  c.nccl_basis.nvlink_bw_GBps = b.number("nvlink_bw_GBps", 0, 1e9);
  c.nccl_basis.nic_bw_bytes_per_s = b.number("nic_bw_bytes_per_s", 0, 1e300);
  c.nccl_basis.nics_per_node = b.integer("nics_per_node", 0, 1 << 24);
  c.nccl_basis.gpus_per_node = b.integer("gpus_per_node", 1, 1 << 24);
  b.finish();
  const nlohmann::json& tiers = f.array("tiers");
  if (tiers.empty()) f.fail("tiers", "needs at least one tier");
  for (size_t i = 0; i < tiers.size(); ++i) {
    const std::string path = indexed("nccl_model.tiers", i);
    add_nccl_tier(c, read_nccl_tier(tiers[i], source, path), source, path);
  }
  f.finish();
}

EfficiencyCalibration read_efficiency(const nlohmann::json& j, const std::string& source,
                                      const std::string& path) {
  Fields f(j, source, path);
  EfficiencyCalibration e;
  e.op = f.string("op");
  if (e.op != "matmul" && e.op != "conv") f.fail("op", "expected \"matmul\" or \"conv\"");
  std::string dtype = f.string("dtype");
  if (!parse_dtype(dtype, e.dtype)) f.fail("dtype", "unknown dtype '" + dtype + "'");
  e.peak_flops_per_s = f.number("peak_flops_per_s", 1, 1e300);
  e.peak_source = f.string("peak_source");
  e.shapes = f.integer("shapes", 0, 1 << 30);
  e.holdout_mape = f.optional_number("holdout_mape", 0, 1e300);
  const nlohmann::json& points = f.array("points");
  if (points.empty()) f.fail("points", "needs at least one [flops, efficiency] point");
  for (size_t i = 0; i < points.size(); ++i) {
    std::string ppath = indexed(f.child("points"), i);
    auto [flops, eff] = read_pair(points[i], source, ppath);
    if (!(flops > 0) || !std::isfinite(flops)) {
      throw InputError(source, ppath, "flops must be positive");
    }
    if (!(eff > 0) || eff > 1) throw InputError(source, ppath, "efficiency must be in (0, 1]");
    if (!e.points.empty() && flops <= e.points.back().flops) {
      throw InputError(source, ppath, "flops must be strictly increasing");
    }
    e.points.push_back({flops, eff});
  }
  f.finish();
  return e;
}

double log_interp(double x, double x0, double y0, double x1, double y1) {
  double t = (std::log(x) - std::log(x0)) / (std::log(x1) - std::log(x0));
  return std::exp(std::log(y0) + t * (std::log(y1) - std::log(y0)));
}

}  // namespace

bool link_tier_collective(CollectiveKind kind) {
  return kind == CollectiveKind::all_reduce || kind == CollectiveKind::all_gather ||
         kind == CollectiveKind::reduce_scatter;
}

double CollectiveCalibration::band_time_s(double bytes) const {
  if (bands.empty()) return -1;
  const AlphaBetaBand* b = &bands.front();
  for (const AlphaBetaBand& band : bands) {
    if (band.from_bytes <= bytes) b = &band;
  }
  return b->alpha_s + b->beta_s_per_byte * bytes;
}

double CollectiveCalibration::measured_time_s(double bytes) const {
  if (measured.empty()) return -1;
  const MeasuredPoint& first = measured.front();
  const MeasuredPoint& last = measured.back();
  if (bytes <= first.bytes) return first.time_s;
  if (bytes >= last.bytes) {
    if (measured.size() == 1) return last.time_s * bytes / last.bytes;
    const MeasuredPoint& prev = measured[measured.size() - 2];
    double slope = (last.time_s - prev.time_s) / (last.bytes - prev.bytes);
    return last.time_s + std::max(slope, 0.0) * (bytes - last.bytes);
  }
  auto hi = std::lower_bound(measured.begin(), measured.end(), bytes,
                             [](const MeasuredPoint& p, double b) { return p.bytes < b; });
  if (hi->bytes == bytes) return hi->time_s;
  auto lo = hi - 1;
  return log_interp(bytes, lo->bytes, lo->time_s, hi->bytes, hi->time_s);
}

const CollectiveCalibration* Calibration::find(CollectiveKind kind, const CommGroup& g,
                                               int groups_per_node) const {
  for (const CollectiveCalibration& c : collectives) {
    if (c.kind == kind && c.group.ranks == g.ranks &&
        c.group.ranks_per_node == g.ranks_per_node && c.groups_per_node == groups_per_node) {
      return &c;
    }
  }
  return nullptr;
}

const LinkTierCalibration* Calibration::find_tier(CollectiveKind kind, const CommGroup& g,
                                                  int groups_per_node) const {
  if (!link_tier_collective(kind) || g.ranks < 2) return nullptr;
  const bool inter = g.ranks > g.ranks_per_node;
  const LinkTierCalibration* same_load = nullptr;
  for (const LinkTierCalibration& t : link_tiers) {
    if (t.inter_node != inter) continue;
    if (!inter) return &t;
    if (t.ranks_per_node == g.ranks_per_node && t.groups_per_node == groups_per_node) return &t;
    if (!same_load && t.ranks_per_node * t.groups_per_node == g.ranks_per_node * groups_per_node) {
      same_load = &t;
    }
  }
  return same_load;
}

NcclComm nccl_comm_for(const ClusterSpec& c, const CommGroup& g, int groups_per_node) {
  return {g.ranks, g.ranks_per_node, double(c.inter.nics_per_node) / std::max(groups_per_node, 1)};
}

NcclTuning apply_nccl_calibration(NcclTuning t, const NcclModelCalibration& m) {
  for (int p = 0; p < kNcclProtoCount; ++p) {
    const NcclModelCalibration::Protocol& own = m.protocols[size_t(p)];
    const double efficiency = own.fitted ? own.bw_efficiency : m.bw_efficiency;
    const float offset_us = float((own.fitted ? own.latency_offset_s : m.latency_offset_s) * 1e6);
    for (int k = 0; k < NcclTuning::kKinds; ++k) {
      for (int a = 0; a < kNcclAlgoCount; ++a) {
        if (t.bw_GBps[k][a][p] <= 0) continue;
        t.bw_GBps[k][a][p] = float(t.bw_GBps[k][a][p] * efficiency);
        t.lat_us[k][a][p] = std::max(0.0f, t.lat_us[k][a][p] + offset_us);
      }
    }
  }
  return t;
}

const NcclModelCalibration* Calibration::find_nccl_model(CollectiveKind kind, const CommGroup& g,
                                                         int groups_per_node) const {
  if (!link_tier_collective(kind) || g.ranks < 2) return nullptr;
  const bool inter = g.ranks > g.ranks_per_node;
  const int load = g.ranks_per_node * groups_per_node;
  const NcclModelCalibration* best = nullptr;
  double best_gap = 0;
  for (const NcclModelCalibration& t : nccl_model) {
    if (t.inter_node != inter) continue;
    if (!inter || (t.ranks_per_node == g.ranks_per_node && t.groups_per_node == groups_per_node)) return &t;
    const double gap = std::abs(std::log(double(t.ranks_per_node) * t.groups_per_node / load));
    if (!best || gap < best_gap) best = &t, best_gap = gap;
  }
  return best;
}

const EfficiencyCalibration* Calibration::find_efficiency(std::string_view op,
                                                          DType dtype) const {
  for (const EfficiencyCalibration& e : efficiency) {
    if (e.op == op && e.dtype == dtype) return &e;
  }
  return nullptr;
}

double Calibration::collective_time_s(CollectiveKind kind, const CommGroup& g,
                                      double bytes) const {
  return collective_time_s(kind, g, 1, bytes);
}

double Calibration::collective_time_s(CollectiveKind kind, const CommGroup& g, int groups_per_node,
                                      double bytes, CalibrationMatch* how) const {
  if (how) *how = CalibrationMatch::none;
  const CollectiveCalibration* c = find(kind, g, groups_per_node);
  if (!c) {
    const LinkTierCalibration* t = find_tier(kind, g, groups_per_node);
    if (!t) return -1;
    if (how) *how = CalibrationMatch::link_tier;
    if (bytes <= 0) return 0;
    return t->fixed_s + ring_time_s(kind, g.ranks, bytes, LinkTier{t->alpha_s, t->beta_s_per_byte});
  }
  if (how) *how = CalibrationMatch::measured;
  if (bytes <= 0) return 0;
  bool covered = !c->measured.empty() && bytes >= c->measured.front().bytes &&
                 bytes <= c->measured.back().bytes;
  if (covered || c->bands.empty()) return c->measured_time_s(bytes);
  return c->band_time_s(bytes);
}

double Calibration::kernel_efficiency(std::string_view op, DType dtype, double flops) const {
  const EfficiencyCalibration* e = find_efficiency(op, dtype);
  if (!e) return -1;
  return interpolate_efficiency(e->points, flops);
}

namespace {

void add_collective(Calibration& c, CollectiveCalibration cc, const std::string& source, const std::string& path) {
  if (c.find(cc.kind, cc.group, cc.groups_per_node)) {
    throw InputError(source, path,
                     "duplicate entry for " + std::string(collective_info(cc.kind).name) + " over " +
                         std::to_string(cc.group.ranks) + " ranks, " + std::to_string(cc.group.ranks_per_node) +
                         " per node" +
                         (cc.groups_per_node > 1 ? ", " + std::to_string(cc.groups_per_node) + " groups per node"
                                                 : std::string()));
  }
  c.collectives.push_back(std::move(cc));
}

void add_efficiency(Calibration& c, EfficiencyCalibration e, const std::string& source, const std::string& path) {
  if (c.find_efficiency(e.op, e.dtype)) {
    throw InputError(source, path, "duplicate entry for " + e.op + " " + std::string(dtype_name(e.dtype)));
  }
  c.efficiency.push_back(std::move(e));
}

// True when `path` is "<list>[<index>]": an entry of that list, not a field inside one.
bool entry_of(const std::string& path, std::string_view list) {
  if (path.size() < list.size() + 3 || path.compare(0, list.size(), list) != 0 || path[list.size()] != '[' ||
      path.back() != ']') {
    return false;
  }
  const std::string_view index = std::string_view(path).substr(list.size() + 1, path.size() - list.size() - 2);
  return index.find_first_not_of("0123456789") == std::string_view::npos;
}

// A JsonObjectHook that reads each entry of the four keyed lists as the parser completes it and
// refuses the first duplicate then, not after parsing the whole file (100,000 copies of one entry
// took seconds to reject). calibration_from_json reads the document again in full afterwards.
class EntryWatch {
 public:
  explicit EntryWatch(std::string source) : source_(std::move(source)) {}
  void operator()(const std::string& path, const nlohmann::json& j) {
    guard_json(source_, [&] {
      if (entry_of(path, "collectives")) add_collective(seen_, read_collective(j, source_, path), source_, path);
      if (entry_of(path, "efficiency")) add_efficiency(seen_, read_efficiency(j, source_, path), source_, path);
      if (entry_of(path, "link_tiers")) add_link_tier(seen_, read_link_tier(j, source_, path), source_, path);
      if (entry_of(path, "nccl_model.tiers")) add_nccl_tier(seen_, read_nccl_tier(j, source_, path), source_, path);
    });
  }

 private:
  std::string source_;
  Calibration seen_;
};

}  // namespace

Calibration calibration_from_json(const nlohmann::json& j, const std::string& source) {
  Fields f(j, source, "");
  Calibration c;
  std::string format = f.string("format");
  if (format != kFormat) {
    f.fail("format", "expected \"" + std::string(kFormat) + "\", got \"" + format + "\"");
  }

  Fields p(f.get("provenance"), source, "provenance");
  c.provenance.device = p.string("device");
  c.provenance.date = p.string("date");
  c.provenance.command = p.string("command");
  const nlohmann::json& inputs = p.array("inputs");
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].is_string()) {
      throw InputError(source, indexed("provenance.inputs", i), "expected a string");
    }
    c.provenance.inputs.push_back(inputs[i].get<std::string>());
  }
  p.finish();

  Fields m(f.get("memory"), source, "memory");
  c.memory.hbm_bytes_per_s = m.number("hbm_bytes_per_s", 0, 1e300);
  c.memory.launch_overhead_s = m.number("launch_overhead_s", 0, 1);
  m.finish();

  const nlohmann::json& colls = f.array("collectives");
  for (size_t i = 0; i < colls.size(); ++i) {
    std::string path = indexed("collectives", i);
    add_collective(c, read_collective(colls[i], source, path), source, path);
  }

  const nlohmann::json& effs = f.array("efficiency");
  for (size_t i = 0; i < effs.size(); ++i) {
    std::string path = indexed("efficiency", i);
    add_efficiency(c, read_efficiency(effs[i], source, path), source, path);
  }
  if (f.has("link_tiers")) {
    const nlohmann::json& tiers = f.array("link_tiers");
    for (size_t i = 0; i < tiers.size(); ++i) {
      std::string path = indexed("link_tiers", i);
      add_link_tier(c, read_link_tier(tiers[i], source, path), source, path);
    }
  }
  if (f.has("nccl_model")) read_nccl_model(f.get("nccl_model"), source, c);
  f.finish();
  return c;
}

nlohmann::json calibration_to_json(const Calibration& c) {
  using nlohmann::json;
  json colls = json::array();
  for (const CollectiveCalibration& cc : c.collectives) {
    json bands = json::array();
    for (const AlphaBetaBand& b : cc.bands) {
      json jb = {{"from_bytes", b.from_bytes},
                 {"alpha_s", b.alpha_s},
                 {"beta_s_per_byte", b.beta_s_per_byte}};
      if (b.fit) {
        json fit = {{"points", b.fit->points},
                    {"r2", b.fit->r2},
                    {"max_rel_error", b.fit->max_rel_error},
                    {"mean_rel_error", b.fit->mean_rel_error}};
        if (b.fit->holdout_rel_error) fit["holdout_rel_error"] = *b.fit->holdout_rel_error;
        jb["fit"] = fit;
      }
      bands.push_back(jb);
    }
    json measured = json::array();
    for (const MeasuredPoint& p : cc.measured) measured.push_back({p.bytes, p.time_s});
    json jc = {{"kind", std::string(collective_info(cc.kind).name)},
               {"ranks", cc.group.ranks},
               {"ranks_per_node", cc.group.ranks_per_node},
               {"source", cc.source},
               {"bands", bands},
               {"measured", measured}};
    if (cc.groups_per_node > 1) jc["groups_per_node"] = cc.groups_per_node;
    colls.push_back(jc);
  }
  json effs = json::array();
  for (const EfficiencyCalibration& e : c.efficiency) {
    json points = json::array();
    for (const EfficiencyPoint& p : e.points) points.push_back({p.flops, p.efficiency});
    json je = {{"op", e.op},
               {"dtype", std::string(dtype_name(e.dtype))},
               {"peak_flops_per_s", e.peak_flops_per_s},
               {"peak_source", e.peak_source},
               {"shapes", e.shapes},
               {"points", points}};
    if (e.holdout_mape) je["holdout_mape"] = *e.holdout_mape;
    effs.push_back(je);
  }
  json out = {{"format", std::string(kFormat)},
          {"provenance",
           {{"device", c.provenance.device},
            {"date", c.provenance.date},
            {"command", c.provenance.command},
            {"inputs", c.provenance.inputs}}},
          {"memory",
           {{"hbm_bytes_per_s", c.memory.hbm_bytes_per_s},
            {"launch_overhead_s", c.memory.launch_overhead_s}}},
          {"collectives", colls},
          {"efficiency", effs}};
  if (!c.link_tiers.empty()) {
    json tiers = json::array();
    for (const LinkTierCalibration& t : c.link_tiers) {
      json jt = {{"tier", t.inter_node ? "inter_node" : "intra_node"}};
      if (t.inter_node) jt["ranks_per_node"] = t.ranks_per_node;
      jt["groups_per_node"] = t.groups_per_node;
      jt["fixed_s"] = t.fixed_s;
      jt["alpha_s"] = t.alpha_s;
      jt["beta_s_per_byte"] = t.beta_s_per_byte;
      jt["shapes"] = t.shapes;
      jt["mean_rel_error"] = t.mean_rel_error;
      if (t.holdout_rel_error) jt["holdout_rel_error"] = *t.holdout_rel_error;
      tiers.push_back(jt);
    }
    out["link_tiers"] = tiers;
  }
  if (!c.nccl_model.empty()) {
    json tiers = json::array();
    for (const NcclModelCalibration& t : c.nccl_model) {
      json jt = {{"tier", t.inter_node ? "inter_node" : "intra_node"}};
      if (t.inter_node) {
        jt["ranks_per_node"] = t.ranks_per_node;
        jt["groups_per_node"] = t.groups_per_node;
      }
      jt["bw_efficiency"] = t.bw_efficiency;
      jt["latency_offset_s"] = t.latency_offset_s;
      jt["shapes"] = t.shapes;
      jt["points"] = t.points;
      json protocols = json::array();
      for (int p = 0; p < kNcclProtoCount; ++p) {
        const NcclModelCalibration::Protocol& tp = t.protocols[size_t(p)];
        if (!tp.fitted) continue;
        protocols.push_back({{"protocol", nccl_proto_name(NcclProto(p))},
                             {"bw_efficiency", tp.bw_efficiency},
                             {"latency_offset_s", tp.latency_offset_s},
                             {"points", tp.points}});
      }
      if (!protocols.empty()) jt["protocols"] = protocols;
      jt["attributed_points"] = t.attributed_points;
      jt["mean_rel_error"] = t.mean_rel_error;
      if (t.holdout_rel_error) jt["holdout_rel_error"] = *t.holdout_rel_error;
      tiers.push_back(jt);
    }
    const NcclModelBasis& b = c.nccl_basis;
    out["nccl_model"] = {{"fitted_against",
                          {{"cluster", b.cluster},
                           {"arch", b.arch},
                           {"nvlink_bw_GBps", b.nvlink_bw_GBps},
                           {"nic_bw_bytes_per_s", b.nic_bw_bytes_per_s},
                           {"nics_per_node", b.nics_per_node},
                           {"gpus_per_node", b.gpus_per_node}}},
                         {"tiers", tiers}};
  }
  return out;
}

Calibration load_calibration_file(const std::string& path) {
  const nlohmann::json j = read_json_file(path, EntryWatch(path));
  return guard_json(path, [&] { return calibration_from_json(j, path); });
}

void save_calibration_file(const std::string& path, const Calibration& c) {
  write_json_atomic(path, calibration_to_json(c));
}

}  // namespace autoddl::costmodel
