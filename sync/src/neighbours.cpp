// Neighbours of a strategy (neighbours.hpp).
#include "autoddl/sync/neighbours.hpp"

#include <algorithm>
#include <array>
#include <map>

#include "autoddl/costmodel/error.hpp"

namespace autoddl::sync {

bool neighbour_strategy(const Strategy& s, const std::vector<Variable>& vars, const costmodel::ClusterSpec& c,
                        std::mt19937_64& rng, Strategy& out) {
  std::map<std::string, const Variable*> by_name;
  for (const Variable& v : vars) by_name[v.name] = &v;
  out = s;
  out.builder.clear();
  out.id = "sampled";
  const int move = std::uniform_int_distribution<int>(0, 3)(rng);
  const double q = std::array<double, 3>{0.1, 0.5, 1.0}[std::uniform_int_distribution<size_t>(0, 2)(rng)];
  const Compressor target = std::bernoulli_distribution(0.5)(rng) ? Compressor::fp16 : Compressor::none;
  int max_group = 0;
  for (const VarConfig& vc : out.vars)
    for (const Synchronizer& p : vc.parts) max_group = std::max(max_group, p.arch == Arch::all_reduce ? p.group : 0);
  std::bernoulli_distribution hit(q);
  std::uniform_int_distribution<int> node(0, c.nodes - 1), group(0, max_group + 1);
  bool changed = false;
  for (VarConfig& vc : out.vars) {
    const bool sparse = by_name.at(vc.var)->sparse;
    for (Synchronizer& p : vc.parts) {
      if (!hit(rng)) continue;
      Synchronizer before = p;
      if (move == 0 && p.arch == Arch::all_reduce) {
        p.compressor = target;
      } else if (move == 1 && !sparse) {
        p = Synchronizer{};
        p.arch = before.arch == Arch::ps ? Arch::all_reduce : Arch::ps;
        if (p.arch == Arch::ps) p.server = node(rng);
        else p.group = group(rng);
      } else if (move == 2 && p.arch == Arch::ps) {
        p.server = node(rng);
      } else if (move == 3 && p.arch == Arch::all_reduce) {
        p.group = group(rng);
      }
      changed = changed || !(p == before);
    }
  }
  if (!changed) return false;
  try {
    validate_strategy(out, vars, c, "mutant");
  } catch (const InputError&) {
    return false;
  }
  return true;
}

}  // namespace autoddl::sync
