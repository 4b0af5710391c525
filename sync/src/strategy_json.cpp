#include "autoddl/sync/strategy_json.hpp"

#include <climits>
#include <set>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"

namespace autoddl::sync {

using nlohmann::json;

namespace {

json synchronizer_to_json(const Synchronizer& s) {
  if (s.arch == Arch::ps) {
    return {{"type", "ps"}, {"server", s.server}, {"local_replication", s.local_replication},
            {"sync", s.sync}, {"staleness", s.staleness}};
  }
  return {{"type", "all_reduce"}, {"group", s.group},
          {"compressor", std::string(compressor_name(s.compressor))},
          {"algorithm", std::string(algorithm_name(s.algorithm))}};
}

// Strict object reader: every key must be allowed; typed getters name the field path.
class Reader {
 public:
  Reader(const json& j, std::string source, std::string path, std::set<std::string> allowed)
      : j_(j), source_(std::move(source)), path_(std::move(path)) {
    if (!j_.is_object()) throw InputError(source_, path_.empty() ? "(top level)" : path_, "must be an object");
    for (const auto& [key, value] : j_.items()) {
      if (!allowed.count(key)) throw InputError(source_, field(key), "unknown key");
    }
  }
  std::string field(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  bool has(const std::string& key) const { return j_.contains(key); }
  const json& at(const std::string& key) const {
    if (!j_.contains(key)) throw InputError(source_, field(key), "is missing");
    return j_.at(key);
  }
  std::string str(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_string()) throw InputError(source_, field(key), "must be a string");
    return v.get<std::string>();
  }
  int integer(const std::string& key, int fallback, bool required = false) const {
    if (!has(key)) {
      if (required) at(key);
      return fallback;
    }
    const json& v = j_.at(key);
    if (!v.is_number_integer()) throw InputError(source_, field(key), "must be an integer");
    if (!json_int_in(v, INT_MIN, INT_MAX)) throw InputError(source_, field(key), "is out of range for an integer");
    return v.get<int>();
  }
  bool boolean(const std::string& key, bool fallback) const {
    if (!has(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_boolean()) throw InputError(source_, field(key), "must be true or false");
    return v.get<bool>();
  }
  const std::string& source() const { return source_; }

 private:
  const json& j_;
  std::string source_, path_;
};

template <class E>
E parse_enum(const Reader& r, const std::string& key, E fallback, std::initializer_list<E> all,
             std::string_view (*name)(E)) {
  if (!r.has(key)) return fallback;
  std::string text = r.str(key);
  std::string known;
  for (E e : all) {
    if (name(e) == text) return e;
    known += (known.empty() ? "" : ", ") + std::string(name(e));
  }
  throw InputError(r.source(), r.field(key), "unknown value '" + text + "' (known: " + known + ")");
}

Synchronizer synchronizer_from_json(const json& j, const std::string& source, const std::string& path) {
  Reader type_reader(j, source, path,
                     {"type", "server", "local_replication", "sync", "staleness", "group", "compressor", "algorithm"});
  Synchronizer s;
  s.arch = parse_enum(type_reader, "type", Arch::all_reduce, {Arch::ps, Arch::all_reduce}, arch_name);
  type_reader.at("type");
  if (s.arch == Arch::ps) {
    Reader r(j, source, path, {"type", "server", "local_replication", "sync", "staleness"});
    s.server = r.integer("server", 0, /*required=*/true);
    s.local_replication = r.boolean("local_replication", false);
    s.sync = r.boolean("sync", true);
    s.staleness = r.integer("staleness", 0);  // range checked by validate_strategy
  } else {
    Reader r(j, source, path, {"type", "group", "compressor", "algorithm"});
    s.group = r.integer("group", 0);
    s.compressor = parse_enum(r, "compressor", Compressor::none, {Compressor::none, Compressor::fp16},
                              compressor_name);
    s.algorithm = parse_enum(r, "algorithm", ArAlgorithm::automatic,
                             {ArAlgorithm::automatic, ArAlgorithm::ring, ArAlgorithm::tree,
                              ArAlgorithm::hierarchical},
                             algorithm_name);
  }
  return s;
}

}  // namespace

json strategy_to_json(const Strategy& s) {
  json vars = json::array();
  for (const VarConfig& v : s.vars) {
    json parts = json::array();
    for (const Synchronizer& p : v.parts) parts.push_back(synchronizer_to_json(p));
    json entry = {{"name", v.var}};
    if (v.shards > 1) entry["partition"] = {{"axis", v.axis}, {"shards", v.shards}, {"uneven", v.uneven}};
    entry["parts"] = std::move(parts);
    vars.push_back(std::move(entry));
  }
  return {{"format", kStrategyFormat}, {"version", kStrategyVersion}, {"id", s.id},
          {"builder", s.builder},      {"vars", std::move(vars)}};
}

Strategy strategy_from_json(const json& j, const std::string& source) {
  Reader top(j, source, "", {"format", "version", "id", "builder", "vars"});
  if (top.str("format") != kStrategyFormat)
    throw InputError(source, "format", "must be \"" + std::string(kStrategyFormat) + "\"");
  if (top.integer("version", 0, true) != kStrategyVersion)
    throw InputError(source, "version", "unsupported version (this autoddl reads " +
                                            std::to_string(kStrategyVersion) + ")");
  Strategy s;
  if (top.has("id")) s.id = top.str("id");
  if (top.has("builder")) s.builder = top.str("builder");
  const json& vars = top.at("vars");
  if (!vars.is_array()) throw InputError(source, "vars", "must be an array");
  for (size_t k = 0; k < vars.size(); ++k) {
    std::string at = "vars[" + std::to_string(k) + "]";
    Reader r(vars[k], source, at, {"name", "partition", "parts"});
    VarConfig vc;
    vc.var = r.str("name");
    if (r.has("partition")) {
      Reader p(r.at("partition"), source, at + ".partition", {"axis", "shards", "uneven"});
      vc.axis = p.integer("axis", 0);
      vc.shards = p.integer("shards", 1, true);
      vc.uneven = p.boolean("uneven", false);
    }
    const json& parts = r.at("parts");
    if (!parts.is_array()) throw InputError(source, at + ".parts", "must be an array");
    for (size_t i = 0; i < parts.size(); ++i) {
      vc.parts.push_back(
          synchronizer_from_json(parts[i], source, at + ".parts[" + std::to_string(i) + "]"));
    }
    s.vars.push_back(std::move(vc));
  }
  return s;
}

Strategy load_strategy_file(const std::string& path, const std::vector<Variable>& vars,
                            const costmodel::ClusterSpec& c) {
  const nlohmann::json j = read_json_file(path);
  Strategy s = guard_json(path, [&] { return strategy_from_json(j, path); });
  validate_strategy(s, vars, c, path);
  return s;
}

}  // namespace autoddl::sync
