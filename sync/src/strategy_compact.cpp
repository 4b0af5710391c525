// The compact strategy form (strategy_compact.hpp): part strings and per-variable entries.
#include "autoddl/sync/strategy_compact.hpp"

#include <climits>
#include <map>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/sync/strategy_json.hpp"

namespace autoddl::sync {

using nlohmann::json;

namespace {

std::string part_text(const Synchronizer& p) {
  if (p.arch == Arch::ps) {
    return "ps:" + std::to_string(p.server) + (p.local_replication ? ":lr" : "") + (p.sync ? "" : ":async") +
           (p.staleness > 0 ? ":stale" + std::to_string(p.staleness) : "");
  }
  std::string t = "ar:" + std::to_string(p.group);
  if (p.compressor == Compressor::fp16) t += ":fp16";
  if (p.algorithm != ArAlgorithm::automatic) t += ":" + std::string(algorithm_name(p.algorithm));
  return t;
}

Synchronizer part_from_text(const json& j, const std::string& source, const std::string& where) {
  if (!j.is_string()) throw InputError(source, where, "must be a part string (\"ps:<server>\" or \"ar:<group>\")");
  const std::string t = j.get<std::string>();
  std::vector<std::string> items;
  for (size_t at = 0; at <= t.size();) {
    size_t colon = t.find(':', at);
    if (colon == std::string::npos) colon = t.size();
    items.push_back(t.substr(at, colon - at));
    at = colon + 1;
  }
  auto bad = [&](const std::string& why) { return InputError(source, where, "'" + t + "': " + why); };
  if (items.size() < 2 || (items[0] != "ps" && items[0] != "ar")) throw bad("must start with ps:<n> or ar:<n>");
  const std::string& n = items[1];
  if (n.empty() || n.size() > 9 || n.find_first_not_of("0123456789") != std::string::npos)
    throw bad("the number after '" + items[0] + ":' must be an integer >= 0");
  Synchronizer p;
  p.arch = items[0] == "ps" ? Arch::ps : Arch::all_reduce;
  (p.arch == Arch::ps ? p.server : p.group) = std::stoi(n);
  for (size_t k = 2; k < items.size(); ++k) {
    const std::string& f = items[k];
    if (p.arch == Arch::ps && f == "lr") {
      p.local_replication = true;
    } else if (p.arch == Arch::ps && f == "async") {
      p.sync = false;
    } else if (p.arch == Arch::ps && f.size() > 5 && f.size() <= 12 && f.rfind("stale", 0) == 0 &&
               f.find_first_not_of("0123456789", 5) == std::string::npos) {
      p.staleness = std::stoi(f.substr(5));  // bounded staleness (a synchronous PS: validate_strategy checks)
    } else if (p.arch == Arch::all_reduce && f == "fp16") {
      p.compressor = Compressor::fp16;
    } else if (p.arch == Arch::all_reduce && (f == "ring" || f == "tree" || f == "hierarchical")) {
      p.algorithm = f == "ring" ? ArAlgorithm::ring : f == "tree" ? ArAlgorithm::tree : ArAlgorithm::hierarchical;
    } else {
      throw bad("unknown flag '" + f + "'");
    }
  }
  return p;
}

}  // namespace

json strategy_to_compact(const Strategy& s, const std::vector<Variable>& vars) {
  std::map<std::string, const VarConfig*> by_name;
  for (const VarConfig& vc : s.vars) by_name[vc.var] = &vc;
  json out = json::array();
  for (const Variable& v : vars) {
    const VarConfig& vc = *by_name.at(v.name);
    if (vc.shards <= 1) {
      out.push_back(part_text(vc.parts.at(0)));
      continue;
    }
    json parts = json::array();
    for (const Synchronizer& p : vc.parts) parts.push_back(part_text(p));
    out.push_back({{"axis", vc.axis}, {"shards", vc.shards}, {"uneven", vc.uneven}, {"parts", std::move(parts)}});
  }
  return {{"id", s.id}, {"builder", s.builder}, {"vars", std::move(out)}};
}

Strategy strategy_from_compact(const json& j, const std::vector<std::string>& names, const std::string& source,
                               const std::string& where) {
  if (!j.is_object() || !j.contains("vars") || !j["vars"].is_array())
    throw InputError(source, where, "must be an object with \"vars\"");
  const json& vars = j["vars"];
  if (vars.size() != names.size())
    throw InputError(source, where + ".vars",
                     std::to_string(vars.size()) + " entries for " + std::to_string(names.size()) + " variables");
  Strategy s;
  s.id = j.value("id", "");
  s.builder = j.value("builder", "");
  for (size_t i = 0; i < vars.size(); ++i) {
    const std::string at = where + ".vars[" + std::to_string(i) + "]";
    VarConfig vc;
    vc.var = names[i];
    if (vars[i].is_object()) {
      const json& e = vars[i];
      for (const char* key : {"axis", "shards"}) {
        if (!e.contains(key) || !json_int_in(e[key], 0, INT_MAX)) throw InputError(source, at + "." + key, "must be an integer >= 0");
      }
      vc.axis = e["axis"].get<int>();
      vc.shards = e["shards"].get<int>();
      vc.uneven = e.value("uneven", false);
      if (!e.contains("parts") || !e["parts"].is_array()) throw InputError(source, at + ".parts", "must be an array");
      for (size_t k = 0; k < e["parts"].size(); ++k)
        vc.parts.push_back(part_from_text(e["parts"][k], source, at + ".parts[" + std::to_string(k) + "]"));
    } else {
      vc.parts.push_back(part_from_text(vars[i], source, at));
    }
    s.vars.push_back(std::move(vc));
  }
  return s;
}

bool is_search_report(const json& j) {
  return j.is_object() && j.contains("runs") && j.contains("strategies") && j["strategies"].is_object();
}

Strategy strategy_from_search_report(const json& report, int run, const std::string& source) {
  if (run < 0) {
    if (!report.contains("best") || !report["best"].is_object() || !report["best"].contains("strategy"))
      throw InputError(source, "best.strategy", "missing");
    return guard_json(source, [&] { return strategy_from_json(report["best"]["strategy"], source + ": best.strategy"); });
  }
  const json& table = report["strategies"];
  if (table.value("format", "") != kCompactStrategiesFormat)
    throw InputError(source, "strategies.format", std::string("must be \"") + kCompactStrategiesFormat + "\"");
  if (!table.contains("variables") || !table["variables"].is_array())
    throw InputError(source, "strategies.variables", "missing or not an array");
  std::vector<std::string> names;
  for (const json& n : table["variables"]) {
    if (!n.is_string()) throw InputError(source, "strategies.variables", "must hold strings");
    names.push_back(n.get<std::string>());
  }
  const json& runs = report["runs"];
  if (!runs.is_array() || run >= static_cast<int>(runs.size()))
    throw InputError(source, "runs", "has no run " + std::to_string(run) + " (the report has " +
                                         std::to_string(runs.is_array() ? runs.size() : 0) + ")");
  const json& r = runs[static_cast<size_t>(run)];
  const std::string where = "runs[" + std::to_string(run) + "].strategy";
  const json& list = table.value("list", json::array());
  if (!r.contains("strategy") || !json_int_in(r["strategy"], 0, static_cast<int64_t>(list.size()) - 1))
    throw InputError(source, where, "must index strategies.list");
  const size_t k = r["strategy"].get<size_t>();
  Strategy s = guard_json(source, [&] {
    return strategy_from_compact(list[k], names, source, "strategies.list[" + std::to_string(k) + "]");
  });
  if (s.id.empty() || s.id == "sampled") s.id = "sampled-run" + std::to_string(run);  // sampled ids repeat
  return s;
}

}  // namespace autoddl::sync
