// The calibration run plan (see calibrate_plan.hpp).
#include "autoddl/calib/calibrate_plan.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace autoddl::calib {

const std::vector<BenchInfo>& calibration_benchmarks() {
  static const std::vector<BenchInfo> table = {
#include "calibration_benchmarks.inc"  // generated from calib/benchmarks.cmake
  };
  return table;
}

namespace {

bool wanted(const char* program, const std::vector<std::string>& only) {
  return only.empty() || std::find(only.begin(), only.end(), program) != only.end();
}

// Powers of two from 2 below n, then n itself (n <= 1: none).
std::vector<int> doubling_up_to(int n) {
  std::vector<int> out;
  if (n < 2) return out;
  for (int p = 2; p < n; p *= 2) out.push_back(p);
  out.push_back(n);
  return out;
}

// A positive integer, or 0.
int positive(const std::string& text) {
  char* end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  return (!text.empty() && *end == '\0' && v > 0 && v < (1 << 24)) ? static_cast<int>(v) : 0;
}

// The value of option `name` at words[i] ("-N4", "-N 4", "--nodes=4", "--nodes 4"), or "".
std::string option_value(const std::vector<std::string>& words, size_t i, const std::string& name) {
  const std::string& w = words[i];
  if (w == name) return i + 1 < words.size() ? words[i + 1] : "";
  if (name.size() > 2 && w.rfind(name + "=", 0) == 0) return w.substr(name.size() + 1);
  if (name.size() == 2 && w.size() > 2 && w.rfind(name, 0) == 0) return w.substr(2);  // -N4
  return "";
}

}  // namespace

std::vector<int> nccl_group_sizes(int gpus) {
  if (gpus <= 1) return {1};
  return doubling_up_to(gpus);
}

std::vector<PlannedRun> calibration_plan(int gpus, bool quick, const std::vector<std::string>& only) {
  std::vector<PlannedRun> plan;
  for (const BenchInfo& b : calibration_benchmarks()) {
    if (!wanted(b.program, only)) continue;
    const std::vector<int> sizes = b.nccl ? nccl_group_sizes(gpus) : std::vector<int>{0};
    for (int g : sizes) {
      PlannedRun r{b.program, {}, b.program, b.what};
      if (g > 0) {
        r.args = {"-g", std::to_string(g)};
        r.stem += "_g" + std::to_string(g);
      }
      if (quick) r.args.push_back("--quick");
      plan.push_back(std::move(r));
    }
  }
  return plan;
}

std::optional<WorldShape> parse_launcher(const std::string& command, std::string& why_not) {
  std::vector<std::string> words;
  std::istringstream in(command);
  for (std::string w; in >> w;) words.push_back(w);
  auto is = [](const std::string& w, const char* tail) {
    const std::string base = w.substr(w.find_last_of('/') + 1);
    return base.size() >= std::string(tail).size() && base.compare(base.size() - std::string(tail).size(), std::string::npos, tail) == 0;
  };
  bool slurm = false, mpi = false;
  for (const std::string& w : words) {
    if (is(w, "srun")) slurm = true;
    if (is(w, "mpirun") || is(w, "mpiexec") || is(w, "mpiexec.hydra")) mpi = true;
  }
  if (slurm == mpi) {
    why_not = slurm ? "it names both srun and mpirun" : "it names neither srun nor mpirun/mpiexec";
    return std::nullopt;
  }
  int nodes = 0, per_node = 0, total = 0;
  for (size_t i = 0; i < words.size(); ++i) {
    auto take = [&](int& into, std::initializer_list<const char*> names) {
      for (const char* n : names) {
        if (int v = positive(option_value(words, i, n))) into = v;
      }
    };
    if (slurm) {
      take(nodes, {"-N", "--nodes"});
      take(per_node, {"--ntasks-per-node"});
      take(total, {"-n", "--ntasks"});
    } else {
      take(total, {"-np", "-n", "--np", "-c"});
      take(per_node, {"-N", "--npernode", "-npernode", "-ppn", "--ppn"});
      const std::string map = option_value(words, i, "--map-by");
      if (map.rfind("ppr:", 0) == 0) {
        const size_t colon = map.find(':', 4);
        if (int v = positive(map.substr(4, colon == std::string::npos ? std::string::npos : colon - 4))) per_node = v;
      }
    }
  }
  if (!nodes && total && per_node && total % per_node == 0) nodes = total / per_node;
  if (!per_node && total && nodes && total % nodes == 0) per_node = total / nodes;
  if (!nodes || !per_node) {
    why_not = slurm ? "give -N/--nodes and --ntasks-per-node (or -n)" : "give -np and a per-node count (-N, --npernode, -ppn or --map-by ppr:K:node)";
    return std::nullopt;
  }
  if (total && total != nodes * per_node) {
    why_not = std::to_string(total) + " tasks do not fill " + std::to_string(nodes) + " nodes x " + std::to_string(per_node);
    return std::nullopt;
  }
  return WorldShape{nodes, per_node};
}

std::string GroupShape::stem_suffix() const {
  return "_g" + std::to_string(ranks) + "_pn" + std::to_string(ranks_per_node) + "_c" + std::to_string(groups_per_node);
}

std::vector<GroupShape> mesh_group_shapes(const WorldShape& w) {
  std::vector<GroupShape> out;
  for (int g : doubling_up_to(w.gpus_per_node)) out.push_back({g, g, 1, "inside one node"});
  for (int n : doubling_up_to(w.nodes)) {
    out.push_back({n, 1, 1, "one rank per node, alone on the NICs"});
    if (w.gpus_per_node > 1) out.push_back({n, 1, w.gpus_per_node, "one rank per node, every GPU's group at once (shared NICs)"});
  }
  if (w.gpus_per_node > 1) {
    for (int n : doubling_up_to(w.nodes)) out.push_back({n * w.gpus_per_node, w.gpus_per_node, 1, n == w.nodes ? "the whole world" : "whole nodes"});
  }
  if (out.empty()) out.push_back({1, 1, 1, "one GPU: the launch latency only"});
  return out;
}

std::vector<PlannedRun> launcher_plan(const WorldShape& w, bool quick, const std::vector<std::string>& only) {
  std::vector<PlannedRun> plan;
  plan.push_back({"gpu_info", {}, "gpu_info", "the GPUs every rank sees"});
  for (const BenchInfo& b : calibration_benchmarks()) {
    if (!wanted(b.program, only)) continue;
    if (!b.nccl) {
      plan.push_back({b.program, {}, b.program, b.what});
      if (quick) plan.back().args.push_back("--quick");
      continue;
    }
    for (const GroupShape& g : mesh_group_shapes(w)) {
      PlannedRun r{b.program,
                   {"--group-ranks", std::to_string(g.ranks), "--ranks-per-node", std::to_string(g.ranks_per_node),
                    "--groups-per-node", std::to_string(g.groups_per_node)},
                   b.program + g.stem_suffix(),
                   b.what};
      if (quick) r.args.push_back("--quick");
      plan.push_back(std::move(r));
    }
  }
  return plan;
}

}  // namespace autoddl::calib
