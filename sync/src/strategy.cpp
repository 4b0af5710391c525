#include "autoddl/sync/strategy.hpp"

#include <map>

#include "autoddl/costmodel/error.hpp"

namespace autoddl::sync {

std::string_view arch_name(Arch a) { return a == Arch::ps ? "ps" : "all_reduce"; }
std::string_view compressor_name(Compressor c) { return c == Compressor::none ? "none" : "fp16"; }
std::string_view algorithm_name(ArAlgorithm a) {
  switch (a) {
    case ArAlgorithm::automatic: return "auto";
    case ArAlgorithm::ring: return "ring";
    case ArAlgorithm::tree: return "tree";
    case ArAlgorithm::hierarchical: return "hierarchical";
  }
  return "?";
}

int64_t shard_extent(int64_t extent, int shards, int i) {
  int64_t base = extent / shards;
  return base + (i < extent % shards ? 1 : 0);
}

double shard_fraction(const Variable& v, const VarConfig& c, int i) {
  if (c.shards <= 1) return 1.0;
  int64_t extent = v.shape.at(static_cast<size_t>(c.axis));
  return static_cast<double>(shard_extent(extent, c.shards, i)) / static_cast<double>(extent);
}

void validate_strategy(const Strategy& s, const std::vector<Variable>& vars,
                       const costmodel::ClusterSpec& c, const std::string& source) {
  std::map<std::string, int> index;
  for (int i = 0; i < static_cast<int>(vars.size()); ++i) index[vars[i].name] = i;
  std::vector<bool> seen(vars.size(), false);
  for (size_t k = 0; k < s.vars.size(); ++k) {
    const VarConfig& vc = s.vars[k];
    std::string at = "vars[" + std::to_string(k) + "]";
    auto it = index.find(vc.var);
    if (it == index.end())
      throw InputError(source, at + ".name", "unknown variable '" + vc.var + "'");
    if (seen[it->second])
      throw InputError(source, at + ".name", "variable '" + vc.var + "' is configured twice");
    seen[it->second] = true;
    const Variable& v = vars[it->second];
    if (vc.shards < 1)
      throw InputError(source, at + ".partition.shards", "must be >= 1 (got " + std::to_string(vc.shards) + ")");
    if (vc.shards > 1) {
      if (vc.axis < 0 || vc.axis >= static_cast<int>(v.shape.size()))
        throw InputError(source, at + ".partition.axis",
                         "must be in [0, " + std::to_string(v.shape.size()) + ") for '" + v.name +
                             "' (got " + std::to_string(vc.axis) + ")");
      int64_t extent = v.shape[static_cast<size_t>(vc.axis)];
      if (vc.shards > extent)
        throw InputError(source, at + ".partition.shards",
                         std::to_string(vc.shards) + " shards exceed the " + std::to_string(extent) +
                             " rows of axis " + std::to_string(vc.axis) + " of '" + v.name + "'");
      if (!vc.uneven && extent % vc.shards != 0)
        throw InputError(source, at + ".partition.shards",
                         std::to_string(vc.shards) + " shards do not divide axis " +
                             std::to_string(vc.axis) + " of '" + v.name + "' (" +
                             std::to_string(extent) + "); set \"uneven\": true for uneven shards");
    }
    if (static_cast<int>(vc.parts.size()) != vc.shards)
      throw InputError(source, at + ".parts",
                       "has " + std::to_string(vc.parts.size()) + " synchronizers for " +
                           std::to_string(vc.shards) + " shards");
    for (size_t p = 0; p < vc.parts.size(); ++p) {
      const Synchronizer& sy = vc.parts[p];
      std::string pat = at + ".parts[" + std::to_string(p) + "]";
      if (sy.arch == Arch::ps && (sy.server < 0 || sy.server >= c.nodes))
        throw InputError(source, pat + ".server",
                         "node " + std::to_string(sy.server) + " does not exist (" + c.name + " has " +
                             std::to_string(c.nodes) + " nodes, 0.." + std::to_string(c.nodes - 1) + ")");
      if (sy.arch == Arch::ps && sy.staleness < 0)
        throw InputError(source, pat + ".staleness", "must be >= 0 (got " + std::to_string(sy.staleness) + ")");
      // ps_strategy.py and the other PS builders: "If staleness is positive, sync has to be set true."
      if (sy.arch == Arch::ps && sy.staleness > 0 && !sy.sync)
        throw InputError(source, pat + ".staleness",
                         "a positive staleness needs \"sync\": true (sync false is unbounded already)");
      if (sy.arch == Arch::all_reduce && sy.group < 0)
        throw InputError(source, pat + ".group", "must be >= 0 (got " + std::to_string(sy.group) + ")");
    }
  }
  // One collective per group: its members must agree on the algorithm.
  std::map<int, std::pair<ArAlgorithm, std::string>> group_algo;
  for (size_t k = 0; k < s.vars.size(); ++k) {
    for (size_t p = 0; p < s.vars[k].parts.size(); ++p) {
      const Synchronizer& sy = s.vars[k].parts[p];
      if (sy.arch != Arch::all_reduce) continue;
      std::string pat = "vars[" + std::to_string(k) + "].parts[" + std::to_string(p) + "]";
      auto [it, fresh] = group_algo.try_emplace(sy.group, sy.algorithm, pat);
      if (!fresh && it->second.first != sy.algorithm)
        throw InputError(source, pat + ".algorithm",
                         "group " + std::to_string(sy.group) + " is one collective but mixes '" +
                             std::string(algorithm_name(it->second.first)) + "' (" + it->second.second +
                             ") and '" + std::string(algorithm_name(sy.algorithm)) + "'");
    }
  }
  for (size_t i = 0; i < vars.size(); ++i) {
    if (!seen[i]) throw InputError(source, "vars", "variable '" + vars[i].name + "' has no synchronizer");
  }
}

}  // namespace autoddl::sync
