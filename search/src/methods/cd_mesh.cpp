// `cd-mesh`: coordinate descent on every mesh shape of the same devices (1 to 3 dims, each dim
// a factor >= 2, aligned with nodes), keeping the fastest by evaluate(); per mesh, plain descent
// from every seed, then neighbourhood moves from the 3 best end points. The nd-SBP space depends
// on the mesh: Megatron-LM's [dp, tp] = [8, 4] layout of 4 DGX nodes is not expressible on
// [4, 8], but is on [8, 4] or [4, 2, 4]. The given mesh is tried first, so the result is never
// slower than cd's from the same seeds. Its objective is over other tables than the shared
// ones, so the ILP bound does not apply to it.
// Every other mesh gets cheap lower bounds first (mesh_bound.hpp): a mesh whose parameters
// alone cannot fit is pruned, the rest are searched in order of their iteration-time bound, and
// once a mesh's bound is no lower than the fastest feasible iteration found, it and every later
// one are pruned (none of their schemes can be faster).
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "../descend.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/mesh.hpp"
#include "autoddl/search/mesh_bound.hpp"

namespace autoddl::search::methods {

namespace {

void factorizations(int rest, std::vector<int>& cur, std::vector<std::vector<int>>& out) {
  if (rest == 1) {
    if (!cur.empty()) out.push_back(cur);
    return;
  }
  if (static_cast<int>(cur.size()) == costmodel::kMaxMeshDims) return;
  for (int f = 2; f <= rest; ++f) {
    if (rest % f) continue;
    cur.push_back(f);
    factorizations(rest / f, cur, out);
    cur.pop_back();
  }
}

}  // namespace

std::vector<SearchResult> run_cd_mesh(SearchContext& ctx, std::string& skip) {
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  if (ctx.options().pipeline_dim >= 0) {
    skip = "with a pipeline dim the mesh is searched as given";
    return {};
  }
  int devices = 1;
  for (int x : ctx.mesh_shape()) devices *= x;
  std::vector<std::vector<int>> meshes{ctx.mesh_shape()}, all;
  std::vector<int> cur;
  factorizations(devices, cur, all);
  for (const auto& m : all) {
    if (m == ctx.mesh_shape()) continue;
    try {
      costmodel::make_mesh(ctx.cluster(), m, "mesh");
      meshes.push_back(m);
    } catch (const InputError&) {
      // not aligned with the nodes
    }
  }
  // Bounds of every mesh but the given one; memory-pruned meshes leave, the rest go by bound.
  struct Candidate {
    std::vector<int> mesh;
    MeshBound bound;
  };
  std::vector<Candidate> order;
  for (size_t i = 0; i < meshes.size(); ++i) {
    order.push_back({meshes[i], mesh_lower_bound(ctx.graph(), ctx.cluster(), meshes[i], -1)});
  }
  std::stable_sort(order.begin() + 1, order.end(),
                   [](const Candidate& a, const Candidate& b) { return a.bound.iteration_s < b.bound.iteration_s; });
  auto seconds = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f s", v);
    return std::string(buf);
  };
  auto mesh_name = [](const std::vector<int>& m) {
    std::string name;
    for (int x : m) name += (name.empty() ? "" : "x") + std::to_string(x);
    return name;
  };
  SearchResult best;
  bool have = false;
  int pruned_memory = 0, pruned_bound = 0;
  nlohmann::json tried = nlohmann::json::array(), pruned = nlohmann::json::array();
  auto prune = [&](const Candidate& m, const char* reason, int& count) {
    ++count;
    pruned.push_back({{"mesh", m.mesh}, {"bound_s", m.bound.iteration_s}, {"memory_bound_bytes", m.bound.memory_bytes},
                      {"reason", reason}});
  };
  for (size_t i = 0; i < order.size(); ++i) {
    const Candidate& m = order[i];
    if (i > 0 && !m.bound.fits()) {
      prune(m, "memory: parameters alone exceed the GPU", pruned_memory);
      continue;
    }
    if (i > 0 && have && best.report.feasible && m.bound.iteration_s >= best.report.iteration_s) {
      prune(m, "bound: no scheme can beat the best found", pruned_bound);
      continue;
    }
    const double left = ctx.options().time_limit_s - elapsed();
    if (left <= 0) break;
    const std::string name = mesh_name(m.mesh);
    SearchOptions o = ctx.options();
    o.mesh_shape = m.mesh;
    o.time_limit_s = left;
    o.progress = [&, i](const std::string& line) {
      ctx.progress("cd-mesh " + name + " (" + std::to_string(i + 1) + "/" + std::to_string(order.size()) + ", " +
                   std::to_string(pruned_memory + pruned_bound) + " pruned, bound " +
                   seconds(m.bound.iteration_s) + "): " + line);
    };
    SearchContext child(ctx.graph(), ctx.cluster(), o);
    CdOptions nbh;
    nbh.neighbourhood = true;
    SearchResult r = descend_from_seeds(child, "cd-mesh", nbh, /*joint_from_best=*/3);
    tried.push_back({{"mesh", m.mesh}, {"iteration_s", r.report.iteration_s}, {"feasible", r.report.feasible},
                     {"bound_s", m.bound.iteration_s}, {"memory_bound_bytes", m.bound.memory_bytes}});
    const bool better = !have || (r.report.feasible && !best.report.feasible) ||
                        (r.report.feasible == best.report.feasible && r.report.iteration_s < best.report.iteration_s);
    if (better) {
      best = std::move(r);
      best.note = "mesh " + name + ", " + best.note;
      have = true;
    }
  }
  ctx.progress("cd-mesh: " + std::to_string(tried.size()) + " of " + std::to_string(order.size()) + " meshes searched, " +
               std::to_string(pruned_memory) + " pruned by memory, " + std::to_string(pruned_bound) + " by bound");
  best.objective_s.reset();  // priced on that mesh's tables, not the shared ones
  best.search_s = elapsed();
  best.details["meshes"] = tried;
  best.details["pruned"] = pruned;
  best.details["meshes_total"] = order.size();
  best.details["pruned_by_memory"] = pruned_memory;
  best.details["pruned_by_bound"] = pruned_bound;
  return {best};
}

}  // namespace autoddl::search::methods
