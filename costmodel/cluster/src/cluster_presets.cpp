// Built-in cluster presets (costmodel/cluster/presets/*.json, compiled in by embedded_presets()) and the
// `--cluster NAME|FILE.json [--nodes N]` lookup every command shares. Kept apart from the JSON
// reader (cluster.cpp) because this is the CLI-facing naming of clusters, not their schema.
#include <algorithm>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/calibration.hpp"
#include "autoddl/costmodel/embedded_presets.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"

namespace autoddl::costmodel {
namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

ClusterSpec load_preset(const EmbeddedPreset& p) {
  const std::string source = "costmodel/cluster/presets/" + std::string(p.name) + ".json";
  return cluster_from_json(parse_json_text(std::string(p.json_text), source), source);
}

}  // namespace

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const EmbeddedPreset& p : embedded_presets()) names.emplace_back(p.name);
  std::sort(names.begin(), names.end());
  return names;
}

ClusterSpec resolve_cluster(const std::string& name_or_path, std::optional<int> nodes_override) {
  if (nodes_override && *nodes_override < 1) {
    throw InputError("--nodes", "", "must be >= 1 (got " + std::to_string(*nodes_override) + ")");
  }
  ClusterSpec c;
  const EmbeddedPreset* preset = nullptr;
  for (const EmbeddedPreset& p : embedded_presets()) {
    if (p.name == name_or_path) preset = &p;
  }
  if (preset) {
    c = load_preset(*preset);
    attach_calibration(c, ".");
  } else if (ends_with(name_or_path, ".json")) {
    c = load_cluster_file(name_or_path);
  } else {
    std::string names;
    for (const std::string& n : preset_names()) names += (names.empty() ? "" : ", ") + n;
    throw InputError("--cluster", "",
                     "unknown cluster '" + name_or_path + "' (presets: " + names +
                         "; or a path to a cluster JSON)");
  }
  if (nodes_override) {
    if (int64_t{*nodes_override} * c.gpus_per_node > ClusterSpec::kMaxGpus) {
      throw InputError("--nodes", "", "gives more than " + std::to_string(ClusterSpec::kMaxGpus) + " GPUs (got " +
                                          std::to_string(*nodes_override) + " nodes)");
    }
    c.nodes = *nodes_override;
    c.sources["nodes"] = "--nodes " + std::to_string(*nodes_override);
  }
  return c;
}

}  // namespace autoddl::costmodel
