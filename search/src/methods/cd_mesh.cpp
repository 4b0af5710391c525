// `cd-mesh`: coordinate descent on every mesh shape of the same devices (1 to 3 dims, each dim
// a factor >= 2, aligned with nodes), keeping the fastest by evaluate(); per mesh, plain descent
// from every seed, then neighbourhood moves from the 3 best end points. The nd-SBP space depends
// on the mesh: Megatron-LM's [dp, tp] = [8, 4] layout of 4 DGX nodes is not expressible on
// [4, 8], but is on [8, 4] or [4, 2, 4]. The given mesh is tried first, so the result is never
// slower than cd's from the same seeds. Its objective is over other tables than the shared
// ones, so the ILP bound does not apply to it.
#include <chrono>

#include "../descend.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/mesh.hpp"

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
  SearchResult best;
  bool have = false;
  nlohmann::json tried = nlohmann::json::array();
  for (size_t i = 0; i < meshes.size(); ++i) {
    const double left = ctx.options().time_limit_s - elapsed();
    if (left <= 0) break;
    std::string name;
    for (int x : meshes[i]) name += (name.empty() ? "" : "x") + std::to_string(x);
    SearchOptions o = ctx.options();
    o.mesh_shape = meshes[i];
    o.time_limit_s = left;
    o.progress = [&](const std::string& line) {
      ctx.progress("cd-mesh " + name + " (" + std::to_string(i + 1) + "/" + std::to_string(meshes.size()) + "): " + line);
    };
    SearchContext child(ctx.graph(), ctx.cluster(), o);
    CdOptions nbh;
    nbh.neighbourhood = true;
    SearchResult r = descend_from_seeds(child, "cd-mesh", nbh, /*joint_from_best=*/3);
    tried.push_back({{"mesh", meshes[i]}, {"iteration_s", r.report.iteration_s}, {"feasible", r.report.feasible}});
    const bool better = !have || (r.report.feasible && !best.report.feasible) ||
                        (r.report.feasible == best.report.feasible && r.report.iteration_s < best.report.iteration_s);
    if (better) {
      best = std::move(r);
      best.note = "mesh " + name + ", " + best.note;
      have = true;
    }
  }
  best.objective_s.reset();  // priced on that mesh's tables, not the shared ones
  best.search_s = elapsed();
  best.details["meshes"] = tried;
  return {best};
}

}  // namespace autoddl::search::methods
