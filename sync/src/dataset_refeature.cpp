// refeature_dataset (dataset.hpp): a record's features again from its strategy, model and cluster.
#include <fstream>
#include <map>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/zoo.hpp"
#include "autoddl/sync/analytical.hpp"
#include "autoddl/sync/dataset.hpp"
#include "autoddl/sync/features.hpp"
#include "autoddl/sync/strategy_json.hpp"

namespace autoddl::sync {

namespace {

struct PairModel {
  costmodel::Graph graph;
  costmodel::ClusterSpec cluster;
  std::vector<Variable> vars;
};

}  // namespace

int64_t refeature_dataset(const std::string& dir) {
  const std::string path = dir + "/records.jsonl";
  std::ifstream in(path);
  if (!in) throw InputError(path, "", "cannot open (a directory written by `autoddl sync dataset`?)");
  std::map<std::string, PairModel> models;  // by pair key
  std::string out;
  int64_t line_no = 0, records = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.empty()) continue;
    const std::string where = "line " + std::to_string(line_no);
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) throw InputError(path, where, "malformed JSON");
    for (const char* key : {"pair", "model", "cluster"}) {
      if (!j.contains(key) || !j[key].is_string()) throw InputError(path, where + ": " + key, "missing or not a string");
    }
    if (!j.contains("strategy") || !j["strategy"].is_object()) throw InputError(path, where + ": strategy", "missing or not an object");
    std::map<std::string, std::string> knobs;
    if (j.contains("knobs")) {
      if (!j["knobs"].is_object()) throw InputError(path, where + ": knobs", "must be an object");
      for (const auto& [k, v] : j["knobs"].items()) {
        if (!v.is_string()) throw InputError(path, where + ": knobs." + k, "must be a string");
        knobs[k] = v.get<std::string>();
      }
    }
    const std::string pair = j["pair"].get<std::string>();
    auto it = models.find(pair);
    if (it == models.end()) {
      PairModel m{costmodel::build_zoo_model(j["model"].get<std::string>(), knobs),
                  costmodel::resolve_cluster(j["cluster"].get<std::string>()), {}};
      m.vars = extract_variables(m.graph);
      it = models.emplace(pair, std::move(m)).first;
    }
    const PairModel& m = it->second;
    const Strategy s = strategy_from_json(j["strategy"], path + ": " + where + ": strategy");
    validate_strategy(s, m.vars, m.cluster, path + ": " + where + ": strategy");
    const Evaluation e = evaluate_analytical(m.graph, m.vars, s, m.cluster);
    j["features"] = strategy_features(m.vars, s, e, m.cluster);
    j["analytical_iteration_s"] = e.iteration_s;
    out += dump_json(j) + "\n";
    ++records;
  }
  write_file_atomic(path, out);
  write_json_atomic(dir + "/schema.json", dataset_schema());
  return records;
}

}  // namespace autoddl::sync
