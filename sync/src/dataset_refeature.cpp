// refeature_dataset (dataset.hpp): a record's features again from its strategy, model and cluster.
#include <filesystem>
#include <map>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/jsonl.hpp"
#include "autoddl/sync/analytical.hpp"
#include "autoddl/sync/dataset.hpp"
#include "autoddl/sync/features.hpp"
#include "autoddl/sync/strategy_json.hpp"
#include "autoddl/sync/training.hpp"
#include "autoddl/sync/workload.hpp"

namespace autoddl::sync {

namespace {

struct PairModel {
  costmodel::Graph graph;
  costmodel::ClusterSpec cluster;
  std::vector<Variable> vars;
};

}  // namespace

int64_t refeature_dataset(const std::string& dir, const std::function<void(const std::string&)>& note) {
  const std::string path = records_path(dir);
  std::map<std::string, PairModel> models;  // by pair key
  std::string out;
  int64_t records = 0;
  const JsonlScan scan = read_jsonl_lines(path, [&](const std::string& line, int64_t line_no) {
    const std::string where = "line " + std::to_string(line_no);
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) throw InputError(path, where, "malformed JSON");
    const std::string pair = record_id(j, path, line_no).pair;
    for (const char* key : {"model", "cluster"}) {
      if (!j.contains(key) || !j[key].is_string()) throw InputError(path, where + ": " + key, "missing or not a string");
    }
    if (!j.contains("strategy") || !j["strategy"].is_object()) throw InputError(path, where + ": strategy", "missing or not an object");
    const std::map<std::string, std::string> knobs = record_knobs(j, path, where);
    auto it = models.find(pair);
    if (it == models.end()) {
      // A record before AutoSync's workloads (no batch among its knobs) is priced at them too.
      costmodel::ClusterSpec c = costmodel::resolve_cluster(j["cluster"].get<std::string>());
      const std::string model = j["model"].get<std::string>();
      PairModel m{build_workload_model(model, knobs, c), std::move(c), {}};
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
  });
  if (scan.torn_line > 0 && note) note(torn_line_note(path, scan.torn_line, "the rewritten file drops it"));
  // Through a link, the file it names is rewritten: the link is the user's, not ours to replace.
  write_file_atomic(std::filesystem::canonical(path).string(), out);
  write_json_atomic(dir + "/schema.json", dataset_schema());
  return records;
}

}  // namespace autoddl::sync
