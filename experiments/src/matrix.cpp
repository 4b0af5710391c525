// Expanding a sweep config into cells with stable keys, and the autoddl command lines of a cell.
#include "autoddl/experiments/matrix.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/sync/dataset.hpp"

namespace autoddl::experiments {

using nlohmann::json;

std::string cell_key(const json& inputs) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a 64, over the canonical (sorted-key) dump
  for (unsigned char ch : inputs.dump()) {
    h ^= ch;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

namespace {

// Every combination of a model's knob values (config order, first knob fastest).
std::vector<std::vector<std::string>> knob_combinations(const ModelEntry& m) {
  std::vector<std::vector<std::string>> out;
  std::vector<size_t> pos(m.knobs.size(), 0);
  while (true) {
    std::vector<std::string> combo;
    for (size_t k = 0; k < m.knobs.size(); ++k) combo.push_back(m.knobs[k].second[pos[k]]);
    out.push_back(combo);
    size_t k = 0;
    while (k < pos.size() && ++pos[k] == m.knobs[k].second.size()) pos[k++] = 0;
    if (k == pos.size()) break;
  }
  return out;
}

// The knob values of a combination after placeholder substitution (checked by the loader).
json knob_values(const ModelEntry& m, const std::vector<std::string>& combo, const ClusterSize& size) {
  json knobs = json::object();
  for (size_t k = 0; k < m.knobs.size(); ++k) {
    std::string v, err;
    substitute_placeholders(combo[k], size, v, err);
    knobs[m.knobs[k].first] = v;
  }
  return knobs;
}

// Every (model, cluster) pair of the sweep as a dataset pair key, for sync_transfer's train side.
std::vector<std::string> all_pair_keys(const SweepConfig& c) {
  std::vector<std::string> keys;
  for (const ModelEntry& m : c.models) {
    for (const auto& combo : knob_combinations(m)) {
      for (const ClusterEntry& ce : c.clusters) {
        json in = {{"model", m.name}, {"knobs", knob_values(m, combo, ce.sizes.at(0))}, {"cluster", ce.name}};
        const std::string k = dataset_pair_key(in);
        if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
      }
    }
  }
  return keys;
}

}  // namespace

std::string dataset_pair_key(const json& in) {
  sync::DatasetPair p{in.at("model").get<std::string>(), {}, in.at("cluster").get<std::string>()};
  for (const auto& [k, v] : in.at("knobs").items()) p.knobs[k] = v.get<std::string>();
  return p.key();
}

namespace {

int64_t saturating_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

int64_t saturating_add(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

int64_t knob_combination_count(const ModelEntry& m) {
  int64_t n = 1;
  for (const auto& knob : m.knobs) n = saturating_mul(n, static_cast<int64_t>(knob.second.size()));
  return n;
}

}  // namespace

int64_t count_cells(const SweepConfig& c) {
  // expand_cells' loops as a sum of products: models x knob combinations x cluster sizes x
  // (per task: items x evaluators x its own factor x seeds x repetitions).
  int64_t models = 0, sizes = 0;
  for (const ModelEntry& m : c.models) models = saturating_add(models, knob_combination_count(m));
  for (const ClusterEntry& ce : c.clusters) sizes = saturating_add(sizes, static_cast<int64_t>(ce.sizes.size()));
  const int64_t pairs = saturating_mul(models, static_cast<int64_t>(c.clusters.size()));  // sync_transfer's
  int64_t per_size = 0;
  for (const TaskEntry& t : c.tasks) {
    int64_t n = saturating_mul(static_cast<int64_t>(t.items.size()), static_cast<int64_t>(t.evaluators.size()));
    if (t.kind == TaskKind::sync_rank) n = saturating_mul(n, static_cast<int64_t>(t.trial_counts.size()));
    if (t.kind == TaskKind::sync_transfer) n = saturating_mul(n, std::max<int64_t>(pairs - 1, 0));
    if (t.kind == TaskKind::sync_search && !t.neighbours.empty())
      n = saturating_mul(n, static_cast<int64_t>(t.neighbours.size()));
    if (t.kind != TaskKind::scheme) n = saturating_mul(n, static_cast<int64_t>(c.seeds.size()));
    per_size = saturating_add(per_size, saturating_mul(n, c.repetitions));
  }
  return saturating_mul(saturating_mul(models, sizes), per_size);
}

double estimated_cell_s(const json& in) {
  const std::string task = in.value("task", "");
  const json opt = in.value("options", json::object());
  const double sim_s = in.value("evaluator", "") == "sim" ? 2.0 : 0.0;
  if (task == "search") return opt.value("time_limit_s", 60.0) + sim_s;
  if (task == "sync_search") return opt.value("trials", 200) * kSyncTrialS;
  if (task == "sync_rank" || task == "sync_transfer") return 1.0;
  return 0.1 + sim_s;  // a scheme: one autoddl cost or simulate
}

std::vector<Cell> expand_cells(const SweepConfig& c) {
  std::vector<Cell> cells;
  std::set<std::string> seen;
  std::vector<std::string> pair_keys;  // only when a sync_transfer task needs them
  for (const TaskEntry& t : c.tasks) {
    if (t.kind == TaskKind::sync_transfer && pair_keys.empty()) pair_keys = all_pair_keys(c);
  }
  auto add = [&](const json& in, bool seeded, const std::string& error) {
    const std::vector<uint64_t> seeds = seeded ? c.seeds : std::vector<uint64_t>{0};
    for (uint64_t seed : seeds) {
      for (int rep = 0; rep < c.repetitions; ++rep) {
        json cin = in;
        if (seeded) cin["seed"] = seed;
        cin["rep"] = rep;
        Cell cell{cell_key(cin), cin, error};
        if (seen.insert(cell.key).second) cells.push_back(std::move(cell));  // a repeated item
      }
    }
  };
  for (const ModelEntry& m : c.models) {
    for (const auto& combo : knob_combinations(m)) {
      for (const ClusterEntry& ce : c.clusters) {
        for (const ClusterSize& size : ce.sizes) {
          json base;
          base["model"] = m.name;
          if (m.is_file) base["model_file"] = true;
          base["knobs"] = knob_values(m, combo, size);
          base["cluster"] = ce.name;
          base["nodes"] = size.nodes;
          base["gpus"] = size.gpus;
          if (size.partial_node) base["gpus_per_node"] = size.gpus_per_node;
          for (const TaskEntry& t : c.tasks) {
            for (const std::string& item : t.items) {
              std::string text, err;
              const bool ok = substitute_placeholders(item, size, text, err);
              for (const std::string& ev : t.evaluators) {
                json in = base;
                if (!t.mesh.empty()) in["mesh"] = t.mesh;
                in["evaluator"] = ev;
                if (t.kind == TaskKind::sync_rank) {  // one cell per training-trial count
                  in["task"] = "sync_rank";
                  in["ranker"] = item;
                  for (int n : t.trial_counts) {
                    in["options"] = {{"data", t.data}, {"trials", n}, {"holdout", t.holdout}};
                    add(in, true, "");
                  }
                  continue;
                }
                if (t.kind == TaskKind::sync_transfer) {  // one cell per other pair to train on
                  in["task"] = "sync_transfer";
                  in["ranker"] = item;
                  in["options"] = {{"data", t.data}, {"finetune", t.finetune}, {"train_trials", t.train_trials}};
                  const std::string self = dataset_pair_key(in);
                  for (const std::string& train : pair_keys) {
                    if (train == self) continue;
                    in["train"] = train;
                    add(in, true, "");
                  }
                  continue;
                }
                if (t.kind == TaskKind::search) {
                  in["task"] = "search";
                  in["method"] = ok ? text : item;
                  in["options"] = {{"time_limit_s", t.time_limit_s}, {"restarts", t.restarts}, {"tie_layers", t.tie_layers}};
                } else if (t.kind == TaskKind::sync_search) {
                  in["task"] = "sync_search";
                  in["options"] = {{"trials", t.trials}};
                  if (!t.neighbours.empty()) {  // the ablation: one cell per arm and neighbours value
                    const size_t colon = item.find(':');
                    in["arm"] = item.substr(0, colon);
                    if (colon != std::string::npos) in["ranker"] = item.substr(colon + 1);
                    else if (item == "random") in["ranker"] = t.shadow_ranker;
                    for (bool nb : t.neighbours) {
                      in["options"]["neighbours"] = nb;
                      add(in, true, "");
                    }
                    continue;
                  }
                } else {
                  in["task"] = "scheme";
                  in["scheme"] = ok ? text : item;
                  in["options"] = json::object();
                }
                if (ev == "sim" && t.kind != TaskKind::sync_search) in["options"]["fidelity"] = t.fidelity;
                add(in, t.kind != TaskKind::scheme, ok ? "" : err);
              }
            }
          }
        }
      }
    }
  }
  return cells;
}

namespace {
std::string describe_inputs(const json& in) {
  std::string s = in.value("model", "?");
  const json knobs = in.value("knobs", json::object());  // a named copy: items() must not outlive it
  for (const auto& [k, v] : knobs.items()) s += " " + k + "=" + v.get<std::string>();
  s += " | " + in.value("cluster", "?") + " " + std::to_string(in.value("gpus", 0)) + " GPUs";
  if (in.contains("gpus_per_node")) s += " (1 node)";
  if (in.contains("mesh")) s += " mesh " + in["mesh"].get<std::string>();
  if (in.value("task", "") == "search") {
    s += " | search " + in.value("method", "?") + " seed " + std::to_string(in.value("seed", 0ull));
  } else if (in.value("task", "") == "sync_rank") {
    s += " | " + in.value("ranker", "?") + " ranker on " + std::to_string(in.at("options").value("trials", 0)) +
         " trials seed " + std::to_string(in.value("seed", 0ull));
  } else if (in.value("task", "") == "sync_transfer") {
    s += " | " + in.value("ranker", "?") + " ranker trained on " + in.value("train", "?") + " seed " +
         std::to_string(in.value("seed", 0ull));
  } else if (in.value("task", "") == "sync_search") {
    s += " | sync search " + std::to_string(in.at("options").value("trials", 0)) + " trials";
    if (in.contains("arm")) {
      s += " arm " + in["arm"].get<std::string>();
      if (in.contains("ranker")) s += " (" + in["ranker"].get<std::string>() + ")";
      if (!in.at("options").value("neighbours", true)) s += " sampler only";
    }
    s += " seed " + std::to_string(in.value("seed", 0ull));
  } else {
    s += " | " + in.value("scheme", "?");
  }
  s += " | " + in.value("evaluator", "?");
  if (in.value("rep", 0) > 0) s += " rep " + std::to_string(in["rep"].get<int>());
  return s;
}
}  // namespace

std::string describe(const json& in) {
  try {
    return describe_inputs(in);
  } catch (const json::exception&) {
    // inputs of another shape (a results row edited by hand): shown as JSON, one line, cut short
    const std::string text = dump_json(in);
    return text.size() > 200 ? text.substr(0, 200) + "..." : text;
  }
}

std::vector<Step> cell_steps(const json& in, const std::string& work_dir) {
  if (in.at("task") == "sync_rank" || in.at("task") == "sync_transfer") return {};  // in-process (sync_cells.hpp)
  std::vector<std::string> common = {"--model", in.at("model").get<std::string>()};
  std::string knobs;
  for (const auto& [k, v] : in.at("knobs").items()) knobs += (knobs.empty() ? "" : ",") + k + "=" + v.get<std::string>();
  if (!knobs.empty()) common.insert(common.end(), {"--set", knobs});
  // A partial node runs on the copy of the cluster that the worker writes (cell_cluster_file).
  const std::string cluster = in.contains("gpus_per_node") ? work_dir + "/cluster.json" : in.at("cluster").get<std::string>();
  common.insert(common.end(), {"--cluster", cluster, "--nodes",
                               std::to_string(in.at("nodes").get<int>())});
  if (in.contains("mesh")) common.insert(common.end(), {"--mesh", in["mesh"].get<std::string>()});
  const json& opt = in.at("options");
  const bool sim = in.at("evaluator") == "sim";
  std::vector<Step> steps;
  auto with = [&](std::vector<std::string> a, std::initializer_list<std::string> more) {
    a.insert(a.end(), more);
    return a;
  };
  if (in.at("task") == "sync_search") {  // the simulator is its evaluator; no mesh applies
    std::vector<std::string> a = {"sync", "search"};
    a.insert(a.end(), common.begin(), common.end());
    a.insert(a.end(), {"--trials", std::to_string(opt.at("trials").get<int>()), "--seed",
                       std::to_string(in.at("seed").get<uint64_t>()), "--json", work_dir + "/sync_search.json"});
    if (in.contains("arm")) a.insert(a.end(), {"--arm", in["arm"].get<std::string>()});
    if (in.contains("ranker")) a.insert(a.end(), {"--ranker", in["ranker"].get<std::string>()});
    if (!opt.value("neighbours", true)) a.push_back("--sampler-only");
    return {Step{"sync_search", a}};
  }
  std::string scheme;
  if (in.at("task") == "search") {
    Step s{"search", with(common, {"--method", in.at("method").get<std::string>(), "--time-limit",
                                   json(opt.at("time_limit_s").get<double>()).dump(), "--restarts",
                                   std::to_string(opt.at("restarts").get<int>()), "--seed",
                                   std::to_string(in.at("seed").get<uint64_t>()), "--top", "0", "--json",
                                   work_dir + "/search.json"})};
    s.args.insert(s.args.begin(), "search");
    if (opt.at("tie_layers").get<bool>()) s.args.push_back("--tie-layers");
    if (sim) s.args.insert(s.args.end(), {"--out", work_dir + "/scheme.json"});
    steps.push_back(s);
    scheme = work_dir + "/scheme.json";
  } else {
    scheme = in.at("scheme").get<std::string>();
  }
  if (sim) {
    Step s{"simulate", with(common, {"--scheme", scheme, "--fidelity", opt.at("fidelity").get<std::string>(), "--json",
                                     work_dir + "/simulate.json"})};
    s.args.insert(s.args.begin(), "simulate");
    steps.push_back(s);
  } else if (in.at("task") == "scheme") {
    Step s{"cost", with(common, {"--scheme", scheme, "--top", "0", "--json", work_dir + "/cost.json"})};
    s.args.insert(s.args.begin(), "cost");
    steps.push_back(s);
  }
  return steps;
}

void parse_shard(const std::string& text, int& index, int& count) {
  const size_t slash = text.find('/');
  auto num = [&](const std::string& s, int& out) {
    if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos) return false;
    out = std::stoi(s);
    return true;
  };
  if (slash == std::string::npos || !num(text.substr(0, slash), index) || !num(text.substr(slash + 1), count) ||
      count < 1 || index >= count) {
    throw InputError("--shard", "", "must be I/N with 0 <= I < N (got '" + text + "')");
  }
}

std::vector<Cell> shard_cells(const std::vector<Cell>& cells, int index, int count) {
  std::vector<std::string> keys;
  for (const Cell& c : cells) keys.push_back(c.key);
  std::sort(keys.begin(), keys.end());
  std::map<std::string, bool> mine;
  for (size_t i = 0; i < keys.size(); ++i) mine[keys[i]] = static_cast<int>(i % count) == index;
  std::vector<Cell> out;
  for (const Cell& c : cells) {
    if (mine[c.key]) out.push_back(c);
  }
  return out;
}

}  // namespace autoddl::experiments
