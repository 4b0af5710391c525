// Loading and checking a sweep config (docs/sweep-json.md). Every field is checked here, and
// every model is built and every cluster size resolved once, so a bad config stops before any
// cell runs with one line naming the file, the field path and the reason.
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/graph_json.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/zoo.hpp"
#include "autoddl/experiments/config.hpp"
#include "autoddl/experiments/matrix.hpp"
#include "autoddl/sync/training.hpp"
#ifdef AUTODDL_HAVE_SEARCH
#include "autoddl/search/searcher.hpp"
#endif

namespace autoddl::experiments {
namespace {

using nlohmann::json;

// Error helper: every failure names the file and the field path.
struct Ctx {
  const std::string& file;
  [[noreturn]] void fail(const std::string& field, const std::string& reason) const {
    throw InputError(file, field, reason);
  }
  void only_keys(const json& j, const std::string& field, std::initializer_list<const char*> keys) const {
    if (!j.is_object()) fail(field.empty() ? "(top level)" : field, "must be an object");
    for (const auto& [k, v] : j.items()) {
      bool known = false;
      for (const char* x : keys) known = known || k == x;
      if (!known) {
        std::string list;
        for (const char* x : keys) list += std::string(list.empty() ? "" : ", ") + x;
        fail(field.empty() ? k : field + "." + k, "unknown field (known: " + list + ")");
      }
    }
  }
  std::string str(const json& j, const std::string& field) const {
    if (!j.is_string() || j.get<std::string>().empty()) fail(field, "must be a non-empty string");
    return j.get<std::string>();
  }
  // A list of T, or one T standing for a list of one.
  const json list(const json& j, const std::string& field) const {
    json l = j.is_array() ? j : json::array({j});
    if (l.empty()) fail(field, "must not be empty");
    return l;
  }
  int positive_int(const json& j, const std::string& field) const {
    constexpr int64_t kMax = 1000000;
    if (!json_int_in(j, 1, kMax)) fail(field, "must be an integer in [1, " + std::to_string(kMax) + "] (got " + j.dump() + ")");
    return j.get<int>();
  }
  double positive_number(const json& j, const std::string& field) const {
    if (!j.is_number() || !(j.get<double>() > 0)) fail(field, "must be a number > 0 (got " + j.dump() + ")");
    return j.get<double>();
  }
};

std::string idx(const std::string& field, size_t i) { return field + "[" + std::to_string(i) + "]"; }

bool is_json_path(const std::string& s) { return s.size() > 5 && s.substr(s.size() - 5) == ".json"; }

ModelEntry parse_model(const Ctx& cx, const json& j, const std::string& f) {
  cx.only_keys(j, f, {"name", "file", "knobs"});
  ModelEntry m;
  if (j.contains("name") == j.contains("file")) cx.fail(f, "needs exactly one of name (zoo model) or file (graph JSON)");
  if (j.contains("file")) {
    m.name = cx.str(j["file"], f + ".file");
    m.is_file = true;
    if (!std::filesystem::is_regular_file(m.name)) cx.fail(f + ".file", "no such file '" + m.name + "'");
    if (j.contains("knobs")) cx.fail(f + ".knobs", "knobs apply to zoo models, not to a graph file");
    return m;
  }
  m.name = cx.str(j["name"], f + ".name");
  const costmodel::ZooModel* zm = costmodel::find_zoo_model(m.name);
  if (!zm) {
    std::string names;
    for (const auto& z : costmodel::zoo_models()) names += std::string(names.empty() ? "" : ", ") + std::string(z.name);
    cx.fail(f + ".name", "unknown zoo model '" + m.name + "' (known: " + names + ")");
  }
  if (j.contains("knobs")) {
    const json& k = j["knobs"];
    if (!k.is_object()) cx.fail(f + ".knobs", "must be an object of knob -> value or list of values");
    for (const auto& [name, values] : k.items()) {
      const std::string kf = f + ".knobs." + name;
      bool known = false;
      for (const auto& spec : zm->knobs) known = known || spec.name == name;
      if (!known) cx.fail(kf, "unknown knob of " + m.name + " (see `autoddl models`)");
      std::vector<std::string> texts;
      const json l = cx.list(values, kf);
      for (size_t i = 0; i < l.size(); ++i) {
        const json& v = l[i];
        if (v.is_string()) texts.push_back(v.get<std::string>());
        else if (v.is_number_integer()) texts.push_back(std::to_string(v.get<long long>()));
        else cx.fail(idx(kf, i), "must be an integer or a string (got " + v.dump() + ")");
      }
      m.knobs.emplace_back(name, texts);
    }
  }
  return m;
}

ClusterEntry parse_cluster(const Ctx& cx, const json& j, const std::string& f) {
  cx.only_keys(j, f, {"name", "file", "nodes", "gpus"});
  ClusterEntry c;
  if (j.contains("name") == j.contains("file")) cx.fail(f, "needs exactly one of name (preset) or file (cluster JSON)");
  const std::string nf = j.contains("file") ? f + ".file" : f + ".name";
  c.name = cx.str(j.contains("file") ? j["file"] : j["name"], nf);
  if (j.contains("file") && !is_json_path(c.name)) cx.fail(nf, "a cluster file must end in .json");
  if (j.contains("name") && is_json_path(c.name)) cx.fail(nf, "a preset name, not a file (use \"file\")");
  costmodel::ClusterSpec base;
  try {
    base = costmodel::resolve_cluster(c.name);
  } catch (const InputError& e) {
    cx.fail(nf, e.reason());
  }
  if (j.contains("nodes") && j.contains("gpus")) cx.fail(f, "give nodes or gpus, not both");
  if (j.contains("gpus")) {
    const json l = cx.list(j["gpus"], f + ".gpus");
    for (size_t i = 0; i < l.size(); ++i) {
      const int g = cx.positive_int(l[i], idx(f + ".gpus", i));
      ClusterSize s;
      s.gpus = g;
      if (g <= base.gpus_per_node) {
        s.nodes = 1;
        s.gpus_per_node = g;
        s.partial_node = g < base.gpus_per_node;
      } else {
        if (g % base.gpus_per_node != 0) {
          cx.fail(idx(f + ".gpus", i), std::to_string(g) + " GPUs is not a whole number of " + base.name + " nodes (" +
                                           std::to_string(base.gpus_per_node) + " GPUs each)");
        }
        s.nodes = g / base.gpus_per_node;
        s.gpus_per_node = base.gpus_per_node;
      }
      c.sizes.push_back(s);
    }
  } else {
    const json l = j.contains("nodes") ? cx.list(j["nodes"], f + ".nodes") : json::array({base.nodes});
    for (size_t i = 0; i < l.size(); ++i) {
      ClusterSize s;
      s.nodes = cx.positive_int(l[i], idx(f + ".nodes", i));
      s.gpus_per_node = base.gpus_per_node;
      s.gpus = s.nodes * base.gpus_per_node;
      c.sizes.push_back(s);
    }
  }
  return c;
}

void check_method(const Ctx& cx, const std::string& text, const std::string& f) {
  std::stringstream ss(text);
  std::string m;
  int n = 0;
  while (std::getline(ss, m, ',')) {
    ++n;
#ifdef AUTODDL_HAVE_SEARCH
    if (m != "baselines" && m != "all" && !search::find_searcher(m)) {
      std::string names;
      for (const auto& s : search::searchers()) names += std::string(names.empty() ? "" : ", ") + std::string(s.name);
      cx.fail(f, "unknown search method '" + m + "' (known: " + names + ", baselines, all)");
    }
#endif
    if (m.empty()) cx.fail(f, "empty method name in '" + text + "'");
  }
  if (n == 0) cx.fail(f, "must name at least one method");
}

// The expert-scheme syntax (costmodel/expert_schemes.hpp); the values themselves are checked
// by the cell that uses them, since they may fit some cluster sizes and not others.
void check_scheme(const Ctx& cx, const std::string& text, const std::string& f) {
  static const std::set<std::string> plain = {"dp", "zero1", "zero3", "owt"};
  static const std::set<std::string> megatron_keys = {"tp", "pp", "dp", "mb", "interleave", "sp", "recompute", "schedule"};
  if (plain.count(text)) return;
  if (is_json_path(text)) {
    if (text.find('{') != std::string::npos) return;
    if (!std::filesystem::is_regular_file(text)) cx.fail(f, "no such scheme file '" + text + "'");
    return;
  }
  if (text.rfind("megatron:", 0) != 0) {
    cx.fail(f, "unknown scheme '" + text + "' (dp, zero1, zero3, owt, megatron:tp=T,pp=P,dp=D[,...] or a scheme JSON file)");
  }
  std::stringstream ss(text.substr(9));
  std::string kv;
  while (std::getline(ss, kv, ',')) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || !megatron_keys.count(kv.substr(0, eq)) || eq + 1 == kv.size()) {
      cx.fail(f, "'" + kv + "' is not key=value with a megatron key (tp, pp, dp, mb, interleave, sp, recompute, schedule)");
    }
  }
}

// The fields of the SBP tasks, which no sync task takes (they run on the simulator or its records).
void reject_sbp_fields(const Ctx& cx, const json& j, const std::string& f, const std::string& task) {
  for (const char* k : {"search", "schemes", "evaluators", "mesh", "time_limit_s", "restarts", "tie_layers", "fidelity"}) {
    if (j.contains(k)) cx.fail(f + "." + k, "does not apply to " + task + " (it runs on the simulator or its records)");
  }
}

// sync_rank / sync_transfer: rankers trained on a dataset folder's records (docs/sweep-json.md).
void parse_sync_learning(const Ctx& cx, const json& s, const std::string& f, TaskEntry& t) {
  const bool rank = t.kind == TaskKind::sync_rank;
  if (rank) cx.only_keys(s, f, {"data", "trials", "rankers", "holdout"});
  else cx.only_keys(s, f, {"data", "rankers", "finetune", "train_trials"});
  if (!s.contains("data")) cx.fail(f + ".data", "missing (a folder written by `autoddl sync dataset --out DIR`)");
  t.data = cx.str(s["data"], f + ".data");
  if (!std::filesystem::is_regular_file(t.data + "/records.jsonl")) {
    cx.fail(f + ".data", "no records.jsonl in '" + t.data + "' (write it with `autoddl sync dataset --out " + t.data +
                             " --pairs ...` first)");
  }
  const json rankers = s.contains("rankers") ? cx.list(s["rankers"], f + ".rankers") : json::array({"linear"});
  for (size_t i = 0; i < rankers.size(); ++i) {
    const std::string name = cx.str(rankers[i], idx(f + ".rankers", i));
    try {
      sync::make_ranker(name, 0, "");
    } catch (const InputError& e) {
      cx.fail(idx(f + ".rankers", i), e.reason());
    }
    t.items.push_back(name);
  }
  if (rank) {
    const json l = s.contains("trials") ? cx.list(s["trials"], f + ".trials") : json::array({10, 20, 50, 100, 200});
    for (size_t i = 0; i < l.size(); ++i) {
      if (!json_int_in(l[i], 2, 100000)) cx.fail(idx(f + ".trials", i), "must be an integer from 2 to 100000 (a ranker needs two trials to order)");
      t.trial_counts.push_back(l[i].get<int>());
    }
    if (s.contains("holdout")) {
      if (!s["holdout"].is_number() || !(s["holdout"].get<double>() > 0 && s["holdout"].get<double>() < 1)) {
        cx.fail(f + ".holdout", "must be a number in (0, 1) (got " + s["holdout"].dump() + ")");
      }
      t.holdout = s["holdout"].get<double>();
    }
  } else {
    // A record count that is 0 (`zero` says what that means) or enough to order (>= 2).
    auto count = [&](const char* key, const std::string& zero, int& out) {
      if (!s.contains(key)) return;
      if (!json_int_in(s[key], 0, 100000) || s[key].get<int>() == 1) {
        cx.fail(f + "." + key, "must be 0 (" + zero + ") or an integer from 2 to 100000 (got " + s[key].dump() + ")");
      }
      out = s[key].get<int>();
    };
    count("finetune", "no target trials", t.finetune);
    count("train_trials", "every record", t.train_trials);
  }
}

// sync_search's ablation fields (docs/sweep-json.md): "arms" (ranker, random, analytical), the
// ranker arm's "rankers" (default ["linear"]; the first also scores the random arm's picks) and
// "neighbours" (list of booleans, default [true]). "rankers" and "neighbours" need "arms".
void parse_sync_arms(const Ctx& cx, const json& s, const std::string& f, TaskEntry& t) {
  if (!s.contains("arms")) {
    for (const char* k : {"rankers", "neighbours"})
      if (s.contains(k)) cx.fail(f + "." + k, "applies with \"arms\" only (the ablation)");
    return;
  }
  std::vector<std::string> rankers;
  const json rl = s.contains("rankers") ? cx.list(s["rankers"], f + ".rankers") : json::array({"linear"});
  for (size_t i = 0; i < rl.size(); ++i) {
    const std::string name = cx.str(rl[i], idx(f + ".rankers", i));
    try {
      sync::make_ranker(name, 0, "");
    } catch (const InputError& e) {
      cx.fail(idx(f + ".rankers", i), e.reason());
    }
    rankers.push_back(name);
  }
  if (rankers.empty()) cx.fail(f + ".rankers", "must name at least one ranker");
  t.shadow_ranker = rankers.front();
  t.items.clear();
  const json al = cx.list(s["arms"], f + ".arms");
  if (al.empty()) cx.fail(f + ".arms", "must name at least one arm");
  for (size_t i = 0; i < al.size(); ++i) {
    const std::string arm = cx.str(al[i], idx(f + ".arms", i));
    if (arm == "ranker") {
      for (const std::string& r : rankers) t.items.push_back("ranker:" + r);
    } else if (arm == "random" || arm == "analytical") {
      t.items.push_back(arm);
    } else {
      cx.fail(idx(f + ".arms", i), "must be ranker, random or analytical (got '" + arm + "')");
    }
  }
  const json nl = s.contains("neighbours") ? cx.list(s["neighbours"], f + ".neighbours") : json::array({true});
  for (size_t i = 0; i < nl.size(); ++i) {
    if (!nl[i].is_boolean()) cx.fail(idx(f + ".neighbours", i), "must be true or false");
    t.neighbours.push_back(nl[i].get<bool>());
  }
  if (t.neighbours.empty()) cx.fail(f + ".neighbours", "must hold true, false or both");
}

TaskEntry parse_task(const Ctx& cx, const json& j, const std::string& f, const std::vector<std::string>& evals) {
  cx.only_keys(j, f, {"search", "schemes", "sync_search", "sync_rank", "sync_transfer", "evaluators", "mesh",
                      "time_limit_s", "restarts", "tie_layers", "fidelity"});
  TaskEntry t;
  const int kinds = j.contains("search") + j.contains("schemes") + j.contains("sync_search") + j.contains("sync_rank") +
                    j.contains("sync_transfer");
  if (kinds != 1) cx.fail(f, "needs exactly one of search (methods), schemes, sync_search, sync_rank or sync_transfer");
  for (const char* name : {"sync_rank", "sync_transfer"}) {
    if (!j.contains(name)) continue;
    reject_sbp_fields(cx, j, f, name);
    t.kind = std::string(name) == "sync_rank" ? TaskKind::sync_rank : TaskKind::sync_transfer;
    parse_sync_learning(cx, j[name], f + "." + name, t);
    t.evaluators = {"sim"};  // the records' runtimes are simulated
    return t;
  }
  if (j.contains("sync_search")) {
    // AutoSync's low-shot search of a data-parallel sync strategy, on the simulator.
    const json& s = j["sync_search"];
    cx.only_keys(s, f + ".sync_search", {"trials", "arms", "rankers", "neighbours"});
    if (s.contains("trials")) {
      if (!s["trials"].is_number_integer() || s["trials"].get<int64_t>() < 1 || s["trials"].get<int64_t>() > 100000) {
        cx.fail(f + ".sync_search.trials", "must be an integer from 1 to 100000");
      }
      t.trials = s["trials"].get<int>();
    }
    reject_sbp_fields(cx, j, f, "sync_search");
    t.kind = TaskKind::sync_search;
    t.items = {""};
    parse_sync_arms(cx, s, f + ".sync_search", t);
    t.evaluators = {"sim"};
    return t;
  }
  t.kind = j.contains("search") ? TaskKind::search : TaskKind::scheme;
  const std::string lf = f + (t.kind == TaskKind::search ? ".search" : ".schemes");
  const json l = cx.list(j[t.kind == TaskKind::search ? "search" : "schemes"], lf);
  ClusterSize probe;  // placeholders are checked for syntax with a size every division fits
  probe.gpus = probe.nodes = probe.gpus_per_node = 1 << 20;
  for (size_t i = 0; i < l.size(); ++i) {
    const std::string text = cx.str(l[i], idx(lf, i)), itf = idx(lf, i);
    std::string probed, err;
    if (!substitute_placeholders(text, probe, probed, err)) cx.fail(itf, err);
    if (t.kind == TaskKind::search) check_method(cx, text, itf);
    else check_scheme(cx, text, itf);
    t.items.push_back(text);
  }
  t.evaluators = evals;
  if (j.contains("evaluators")) {
    t.evaluators.clear();
    const json e = cx.list(j["evaluators"], f + ".evaluators");
    for (size_t i = 0; i < e.size(); ++i) {
      const std::string v = cx.str(e[i], idx(f + ".evaluators", i));
      if (v != "analytical" && v != "sim") cx.fail(idx(f + ".evaluators", i), "must be analytical or sim (got '" + v + "')");
      t.evaluators.push_back(v);
    }
  }
  if (j.contains("mesh")) t.mesh = cx.str(j["mesh"], f + ".mesh");
  const bool search = t.kind == TaskKind::search;
  for (const char* k : {"time_limit_s", "restarts", "tie_layers"}) {
    if (j.contains(k) && !search) cx.fail(f + "." + k, "applies to search tasks only");
  }
  if (j.contains("time_limit_s")) t.time_limit_s = cx.positive_number(j["time_limit_s"], f + ".time_limit_s");
  if (j.contains("restarts")) {
    if (!json_int_in(j["restarts"], 0, 10000)) cx.fail(f + ".restarts", "must be an integer in [0, 10000]");
    t.restarts = j["restarts"].get<int>();
  }
  if (j.contains("tie_layers")) {
    if (!j["tie_layers"].is_boolean()) cx.fail(f + ".tie_layers", "must be true or false");
    t.tie_layers = j["tie_layers"].get<bool>();
  }
  if (j.contains("fidelity")) {
    t.fidelity = cx.str(j["fidelity"], f + ".fidelity");
    if (t.fidelity != "step" && t.fidelity != "flow") cx.fail(f + ".fidelity", "must be step or flow");
  }
  return t;
}

// Builds every (model, knob values) the matrix will use, at every cluster size, once: a knob
// value the model refuses is a config error, not a failed cell.
void check_models(const Ctx& cx, const SweepConfig& c) {
  std::set<std::string> built;
  for (size_t mi = 0; mi < c.models.size(); ++mi) {
    const ModelEntry& m = c.models[mi];
    const std::string f = idx("models", mi);
    if (m.is_file) {
      try {
        costmodel::load_graph_file(m.name);
      } catch (const InputError& e) {
        cx.fail(f + ".file", e.what());
      }
      continue;
    }
    for (const ClusterEntry& ce : c.clusters) {
      for (const ClusterSize& s : ce.sizes) {
        // every combination of knob values
        std::vector<size_t> pos(m.knobs.size(), 0);
        while (true) {
          std::map<std::string, std::string> knobs;
          for (size_t k = 0; k < m.knobs.size(); ++k) {
            std::string v, err;
            if (!substitute_placeholders(m.knobs[k].second[pos[k]], s, v, err)) {
              cx.fail(f + ".knobs." + m.knobs[k].first, err + " (at " + std::to_string(s.gpus) + " GPUs)");
            }
            knobs[m.knobs[k].first] = v;
          }
          std::string id = m.name;
          for (const auto& [k, v] : knobs) id += "," + k + "=" + v;
          if (built.insert(id).second) {
            try {
              costmodel::build_zoo_model(m.name, knobs);
            } catch (const InputError& e) {
              cx.fail(f + ".knobs" + (e.field().empty() ? "" : "." + e.field()), e.reason());
            }
          }
          size_t k = 0;
          while (k < pos.size() && ++pos[k] == m.knobs[k].second.size()) pos[k++] = 0;
          if (k == pos.size()) break;
        }
      }
    }
  }
}

// sync_rank and sync_transfer read records of (zoo model, preset) pairs at the preset's own size,
// which is all a dataset holds; sync_transfer needs a second pair to train on.
void check_dataset_tasks(const Ctx& cx, const SweepConfig& c) {
  for (size_t ti = 0; ti < c.tasks.size(); ++ti) {
    const TaskEntry& t = c.tasks[ti];
    if (t.kind != TaskKind::sync_rank && t.kind != TaskKind::sync_transfer) continue;
    const std::string task = t.kind == TaskKind::sync_rank ? "sync_rank" : "sync_transfer";
    size_t pairs = 0;
    for (size_t mi = 0; mi < c.models.size(); ++mi) {
      if (c.models[mi].is_file) cx.fail(idx("models", mi) + ".file", task + " reads dataset records of zoo models only");
      size_t combos = 1;
      for (const auto& k : c.models[mi].knobs) combos *= k.second.size();
      pairs += combos * c.clusters.size();
    }
    for (size_t ci = 0; ci < c.clusters.size(); ++ci) {
      const costmodel::ClusterSpec base = costmodel::resolve_cluster(c.clusters[ci].name);
      for (const ClusterSize& s : c.clusters[ci].sizes) {
        if (s.nodes != base.nodes || s.gpus_per_node != base.gpus_per_node) {
          cx.fail(idx("clusters", ci), task + " reads dataset records made at the preset's own size (" +
                                           std::to_string(base.nodes) + " nodes); leave nodes and gpus out");
        }
      }
    }
    if (t.kind == TaskKind::sync_transfer && pairs < 2) {
      cx.fail(idx("tasks", ti) + ".sync_transfer", "needs at least two (model, cluster) pairs: one to train on, one to test");
    }
  }
}

// The cell count against the limit, before check_models builds every knob combination: a config
// that asks for absurd work (repetitions 10^6, a 10^9-cell knob x seed product) stops here.
void check_cell_count(const Ctx& cx, const SweepConfig& c, bool allow_large) {
  const int64_t cells = count_cells(c);
  const int64_t limit = allow_large ? kMaxSweepCellsLarge : kMaxSweepCells;
  if (cells <= limit) return;
  const std::string count = cells == INT64_MAX ? "more than 2^63" : std::to_string(cells);
  cx.fail("", "expands to " + count + " cells, more than " + std::to_string(limit) +
                  (allow_large ? " (the limit even with --allow-large; split the sweep)"
                               : " (the limit of a sweep; `sweep run --allow-large` lifts it to " +
                                     std::to_string(kMaxSweepCellsLarge) + ")"));
}

}  // namespace

SweepConfig sweep_config_from_json(const json& j, const std::string& source, bool allow_large) {
  Ctx cx{source};
  cx.only_keys(j, "", {"name", "description", "output", "models", "clusters", "tasks", "evaluators", "seeds",
                       "repetitions", "cell_timeout_s", "comment"});
  SweepConfig c;
  c.file = source;
  c.raw = j;
  if (!j.contains("name")) cx.fail("name", "missing (a short name for the sweep)");
  c.name = cx.str(j["name"], "name");
  for (char ch : c.name) {
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.')) {
      cx.fail("name", "use letters, digits, '_', '-' and '.' only (it names the output folder)");
    }
  }
  if (j.contains("description")) c.description = cx.str(j["description"], "description");
  if (j.contains("comment") && !j["comment"].is_string()) cx.fail("comment", "must be a string");
  c.output = j.contains("output") ? cx.str(j["output"], "output") : "results/" + c.name;
  for (const char* k : {"models", "clusters", "tasks"}) {
    if (!j.contains(k)) cx.fail(k, "missing");
    if (!j[k].is_array() || j[k].empty()) cx.fail(k, "must be a non-empty list");
  }
  std::vector<std::string> evals{"analytical"};
  if (j.contains("evaluators")) {
    evals.clear();
    const json e = cx.list(j["evaluators"], "evaluators");
    for (size_t i = 0; i < e.size(); ++i) {
      const std::string v = cx.str(e[i], idx("evaluators", i));
      if (v != "analytical" && v != "sim") cx.fail(idx("evaluators", i), "must be analytical or sim (got '" + v + "')");
      evals.push_back(v);
    }
  }
  for (size_t i = 0; i < j["models"].size(); ++i) c.models.push_back(parse_model(cx, j["models"][i], idx("models", i)));
  for (size_t i = 0; i < j["clusters"].size(); ++i) {
    c.clusters.push_back(parse_cluster(cx, j["clusters"][i], idx("clusters", i)));
  }
  for (size_t i = 0; i < j["tasks"].size(); ++i) c.tasks.push_back(parse_task(cx, j["tasks"][i], idx("tasks", i), evals));
  if (j.contains("seeds")) {
    c.seeds.clear();
    const json l = cx.list(j["seeds"], "seeds");
    for (size_t i = 0; i < l.size(); ++i) {
      if (!l[i].is_number_unsigned()) cx.fail(idx("seeds", i), "must be an integer >= 0");
      c.seeds.push_back(l[i].get<uint64_t>());
    }
  }
  if (j.contains("repetitions")) c.repetitions = cx.positive_int(j["repetitions"], "repetitions");
  if (j.contains("cell_timeout_s")) c.cell_timeout_s = cx.positive_number(j["cell_timeout_s"], "cell_timeout_s");
  check_cell_count(cx, c, allow_large);
  check_models(cx, c);
  check_dataset_tasks(cx, c);
  return c;
}

SweepConfig load_sweep_config(const std::string& path, bool allow_large) {
  const json j = read_json_file(path);
  return guard_json(path, [&] { return sweep_config_from_json(j, path, allow_large); });
}

}  // namespace autoddl::experiments
