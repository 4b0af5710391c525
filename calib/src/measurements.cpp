// Loader of the GPU microbenchmarks' result files (see measurements.hpp).
#include "autoddl/calib/measurements.hpp"

#include <cmath>
#include <set>

#include "autoddl/costmodel/collective.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"

namespace autoddl::calib {

namespace {

constexpr std::string_view kFormat = "autoddl-measurements/1";

// Checks that object `j` at `path` has exactly `keys`, plus any of `optional`.
void exact_keys(const nlohmann::json& j, std::initializer_list<std::string_view> keys,
                const std::string& source, const std::string& path,
                std::initializer_list<std::string_view> optional = {}) {
  if (!j.is_object()) throw InputError(source, path.empty() ? "(top level)" : path, "expected a JSON object");
  std::set<std::string_view> known(keys);
  known.insert(optional.begin(), optional.end());
  auto field = [&](std::string_view key) { return path.empty() ? std::string(key) : path + "." + std::string(key); };
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!known.count(it.key())) throw InputError(source, field(it.key()), "unknown key");
  }
  for (std::string_view k : keys) {
    if (!j.contains(k)) throw InputError(source, field(k), "missing");
  }
}

std::string str(const nlohmann::json& j, const char* key, const std::string& source,
                const std::string& path) {
  if (!j.at(key).is_string()) throw InputError(source, path + key, "expected a string");
  return j.at(key).get<std::string>();
}

double num(const nlohmann::json& j, const char* key, const std::string& source,
           const std::string& path) {
  const nlohmann::json& v = j.at(key);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0) {
    throw InputError(source, path + key, "expected a non-negative number");
  }
  return v.get<double>();
}

int integer_in(const nlohmann::json& j, const char* key, int lo, int hi, const std::string& source,
               const std::string& path) {
  if (!json_int_in(j.at(key), lo, hi)) {
    const std::string top = hi == (1 << 24) ? "2^24" : std::to_string(hi);
    throw InputError(source, path + key, "expected an integer in [" + std::to_string(lo) + ", " + top + "]");
  }
  return static_cast<int>(j.at(key).get<int64_t>());
}

NcclRunInfo read_nccl_run(const nlohmann::json& j, const std::string& source) {
  exact_keys(j, {"version", "env", "communicators", "coll_channels", "nvls_channels", "logs"}, source, "nccl");
  NcclRunInfo r;
  r.version = str(j, "version", source, "nccl.");
  if (!j.at("env").is_object()) throw InputError(source, "nccl.env", "expected an object");
  for (auto it = j.at("env").begin(); it != j.at("env").end(); ++it) {
    if (!it.value().is_string()) throw InputError(source, "nccl.env." + it.key(), "expected a string");
    r.env[it.key()] = it.value().get<std::string>();
  }
  const nlohmann::json& comms = j.at("communicators");
  if (!comms.is_array()) throw InputError(source, "nccl.communicators", "expected an array");
  for (size_t i = 0; i < comms.size(); ++i) {
    const std::string path = "nccl.communicators[" + std::to_string(i) + "]";
    exact_keys(comms[i], {"ranks", "nodes", "local_ranks"}, source, path);
    r.comms.push_back({integer_in(comms[i], "ranks", 1, 1 << 24, source, path + "."),
                       integer_in(comms[i], "nodes", 1, 1 << 24, source, path + "."),
                       integer_in(comms[i], "local_ranks", 1, 1 << 24, source, path + ".")});
  }
  r.coll_channels = integer_in(j, "coll_channels", 0, 1024, source, "nccl.");
  r.nvls_channels = integer_in(j, "nvls_channels", 0, 1024, source, "nccl.");
  const nlohmann::json& logs = j.at("logs");
  if (!logs.is_array()) throw InputError(source, "nccl.logs", "expected an array");
  for (size_t i = 0; i < logs.size(); ++i) {
    if (!logs[i].is_string()) throw InputError(source, "nccl.logs[" + std::to_string(i) + "]", "expected a string");
    r.logs.push_back(logs[i].get<std::string>());
  }
  return r;
}

// The optional nccl_algo / nccl_proto / nccl_channels of a row (algo and proto come together).
std::optional<NcclChoice> read_row_choice(const nlohmann::json& r, const std::string& source, const std::string& path) {
  if (!r.contains("nccl_algo") && !r.contains("nccl_proto") && !r.contains("nccl_channels")) return std::nullopt;
  for (const char* key : {"nccl_algo", "nccl_proto"}) {
    if (!r.contains(key)) throw InputError(source, path + key, "missing (nccl_algo and nccl_proto come together)");
  }
  NcclChoice c;
  c.algo = str(r, "nccl_algo", source, path);
  if (!known_nccl_algo(c.algo)) {
    throw InputError(source, path + "nccl_algo",
                     "unknown NCCL algorithm '" + c.algo + "' (ring, tree, nvls, nvls_tree, pat, collnet_direct, collnet_chain)");
  }
  c.proto = str(r, "nccl_proto", source, path);
  if (!known_nccl_proto(c.proto)) {
    throw InputError(source, path + "nccl_proto", "unknown NCCL protocol '" + c.proto + "' (LL, LL128, Simple)");
  }
  if (r.contains("nccl_channels")) c.channels = integer_in(r, "nccl_channels", 1, 1024, source, path);
  return c;
}

}  // namespace

MeasurementFile measurements_from_json(const nlohmann::json& j, const std::string& source) {
  exact_keys(j, {"format", "benchmark", "provenance", "rows"}, source, "", {"nccl"});
  MeasurementFile m;
  m.path = source;
  if (str(j, "format", source, "") != kFormat) {
    throw InputError(source, "format", "expected \"" + std::string(kFormat) + "\"");
  }
  m.benchmark = str(j, "benchmark", source, "");
  const nlohmann::json& p = j.at("provenance");
  exact_keys(p, {"device", "date", "command", "host", "versions"}, source, "provenance");
  m.device = str(p, "device", source, "provenance.");
  m.date = str(p, "date", source, "provenance.");
  m.command = str(p, "command", source, "provenance.");
  m.host = str(p, "host", source, "provenance.");
  if (!p.at("versions").is_object()) throw InputError(source, "provenance.versions", "expected an object");
  m.versions = p.at("versions");
  if (j.contains("nccl")) m.nccl = read_nccl_run(j.at("nccl"), source);

  const nlohmann::json& rows = j.at("rows");
  if (!rows.is_array()) throw InputError(source, "rows", "expected an array");
  for (size_t i = 0; i < rows.size(); ++i) {
    std::string path = "rows[" + std::to_string(i) + "]";
    const nlohmann::json& r = rows[i];
    exact_keys(r,
               {"name", "size_bytes", "count", "dtype", "ranks", "ranks_per_node", "time_us",
                "kernel_us", "algbw_GBps", "busbw_GBps", "flops", "tflops", "wrong", "shape",
                "skipped"},
               source, path, {"groups_per_node", "nccl_algo", "nccl_proto", "nccl_channels"});
    path += ".";
    MeasurementRow row;
    row.name = str(r, "name", source, path);
    row.dtype = str(r, "dtype", source, path);
    row.size_bytes = num(r, "size_bytes", source, path);
    row.count = static_cast<int64_t>(num(r, "count", source, path));
    row.ranks = integer_in(r, "ranks", 1, 1 << 24, source, path);
    row.ranks_per_node = integer_in(r, "ranks_per_node", 1, 1 << 24, source, path);
    if (row.ranks_per_node > row.ranks) {
      throw InputError(source, path + "ranks_per_node", "exceeds ranks");
    }
    if (r.contains("groups_per_node")) row.groups_per_node = integer_in(r, "groups_per_node", 1, 1 << 24, source, path);
    row.time_us = num(r, "time_us", source, path);
    if (!r.at("kernel_us").is_null()) row.kernel_us = num(r, "kernel_us", source, path);
    row.algbw_GBps = num(r, "algbw_GBps", source, path);
    row.busbw_GBps = num(r, "busbw_GBps", source, path);
    row.flops = num(r, "flops", source, path);
    row.tflops = num(r, "tflops", source, path);
    if (!r.at("wrong").is_null()) row.wrong = static_cast<int64_t>(num(r, "wrong", source, path));
    if (!r.at("shape").is_object()) throw InputError(source, path + "shape", "expected an object");
    row.shape = r.at("shape");
    if (!r.at("skipped").is_null()) {
      row.skipped = str(r, "skipped", source, path);
      if (row.skipped.empty()) throw InputError(source, path + "skipped", "null or a reason");
    } else if (!(row.time_us > 0)) {
      throw InputError(source, path + "time_us", "must be positive in a row that was measured");
    }
    row.nccl = read_row_choice(r, source, path);
    m.rows.push_back(std::move(row));
  }
  return m;
}

MeasurementFile load_measurement_file(const std::string& path) {
  const nlohmann::json j = read_json_file(path);
  return guard_json(path, [&] { return measurements_from_json(j, path); });
}

nlohmann::json measurements_to_json(const MeasurementFile& m) {
  using nlohmann::json;
  json rows = json::array();
  for (const MeasurementRow& r : m.rows) {
    json jr = {{"name", r.name},
               {"size_bytes", r.size_bytes},
               {"count", r.count},
               {"dtype", r.dtype},
               {"ranks", r.ranks},
               {"ranks_per_node", r.ranks_per_node},
               {"time_us", r.time_us},
               {"kernel_us", r.kernel_us ? json(*r.kernel_us) : json()},
               {"algbw_GBps", r.algbw_GBps},
               {"busbw_GBps", r.busbw_GBps},
               {"flops", r.flops},
               {"tflops", r.tflops},
               {"wrong", r.wrong ? json(*r.wrong) : json()},
               {"shape", r.shape},
               {"skipped", r.skipped.empty() ? json() : json(r.skipped)}};
    if (r.groups_per_node != 1) jr["groups_per_node"] = r.groups_per_node;
    if (r.nccl) {
      jr["nccl_algo"] = r.nccl->algo;
      jr["nccl_proto"] = r.nccl->proto;
      if (r.nccl->channels > 0) jr["nccl_channels"] = r.nccl->channels;
    }
    rows.push_back(std::move(jr));
  }
  json out = {{"format", std::string(kFormat)},
              {"benchmark", m.benchmark},
              {"provenance",
               {{"device", m.device}, {"date", m.date}, {"command", m.command}, {"host", m.host}, {"versions", m.versions}}},
              {"rows", rows}};
  if (m.nccl) {
    json comms = json::array();
    for (const NcclCommRecord& c : m.nccl->comms) {
      comms.push_back({{"ranks", c.ranks}, {"nodes", c.nodes}, {"local_ranks", c.local_ranks}});
    }
    out["nccl"] = {{"version", m.nccl->version},
                   {"env", m.nccl->env},
                   {"communicators", comms},
                   {"coll_channels", m.nccl->coll_channels},
                   {"nvls_channels", m.nccl->nvls_channels},
                   {"logs", m.nccl->logs}};
  }
  return out;
}

int attach_nccl_log(MeasurementFile& m, const NcclDebugLog& log, const std::vector<std::string>& log_files) {
  int attached = 0;
  for (MeasurementRow& r : m.rows) {
    if (!r.skipped.empty() || !costmodel::find_collective(r.name)) continue;
    r.nccl = nccl_choice_at(log, r.name, r.ranks, r.size_bytes);
    if (r.nccl) ++attached;
  }
  m.nccl = log.run;
  m.nccl->logs = log_files;
  return attached;
}

int attach_nccl_log_files(const std::string& path, const std::vector<std::string>& log_files) {
  NcclDebugLog log;
  for (const std::string& f : log_files) parse_nccl_debug_text(read_text_file(f), log);
  if (log.tuning.empty() && log.run.version.empty()) return 0;  // no NCCL lines: the file stays as it is
  MeasurementFile m = load_measurement_file(path);
  const int attached = attach_nccl_log(m, log, log_files);
  write_json_atomic(path, measurements_to_json(m));
  return attached;
}

std::optional<MeasurementFile> load_measurement_file_if_any(const std::string& path, std::string& why_not) {
  const nlohmann::json j = read_json_file(path);
  if (!j.is_object() || !j.contains("format")) {
    why_not = "not a measurement file (no \"format\": \"" + std::string(kFormat) + "\")";
    return std::nullopt;
  }
  if (!j.at("format").is_string() || j.at("format").get<std::string>() != kFormat) {
    why_not = "not a measurement file (format " + j.at("format").dump() + ", not \"" + std::string(kFormat) + "\")";
    return std::nullopt;
  }
  return guard_json(path, [&] { return measurements_from_json(j, path); });
}

}  // namespace autoddl::calib
