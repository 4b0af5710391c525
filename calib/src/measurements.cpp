// Loader of the GPU microbenchmarks' result files (see measurements.hpp).
#include "autoddl/calib/measurements.hpp"

#include <cmath>
#include <set>

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

}  // namespace

MeasurementFile measurements_from_json(const nlohmann::json& j, const std::string& source) {
  exact_keys(j, {"format", "benchmark", "provenance", "rows"}, source, "");
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

  const nlohmann::json& rows = j.at("rows");
  if (!rows.is_array()) throw InputError(source, "rows", "expected an array");
  for (size_t i = 0; i < rows.size(); ++i) {
    std::string path = "rows[" + std::to_string(i) + "]";
    const nlohmann::json& r = rows[i];
    exact_keys(r,
               {"name", "size_bytes", "count", "dtype", "ranks", "ranks_per_node", "time_us",
                "kernel_us", "algbw_GBps", "busbw_GBps", "flops", "tflops", "wrong", "shape",
                "skipped"},
               source, path, {"groups_per_node"});
    path += ".";
    MeasurementRow row;
    row.name = str(r, "name", source, path);
    row.dtype = str(r, "dtype", source, path);
    row.size_bytes = num(r, "size_bytes", source, path);
    row.count = static_cast<int64_t>(num(r, "count", source, path));
    for (auto [key, out] : {std::pair{"ranks", &row.ranks}, {"ranks_per_node", &row.ranks_per_node}}) {
      if (!json_int_in(r.at(key), 1, 1 << 24)) {
        throw InputError(source, path + key, "expected an integer in [1, 2^24]");
      }
      *out = static_cast<int>(r.at(key).get<int64_t>());
    }
    if (row.ranks_per_node > row.ranks) {
      throw InputError(source, path + "ranks_per_node", "exceeds ranks");
    }
    if (r.contains("groups_per_node")) {
      if (!json_int_in(r.at("groups_per_node"), 1, 1 << 24)) {
        throw InputError(source, path + "groups_per_node", "expected an integer in [1, 2^24]");
      }
      row.groups_per_node = static_cast<int>(r.at("groups_per_node").get<int64_t>());
    }
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
    m.rows.push_back(std::move(row));
  }
  return m;
}

MeasurementFile load_measurement_file(const std::string& path) {
  const nlohmann::json j = read_json_file(path);
  return guard_json(path, [&] { return measurements_from_json(j, path); });
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
