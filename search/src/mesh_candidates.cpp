// Mesh enumeration for cd-mesh (see mesh_candidates.hpp).
#include "autoddl/search/mesh_candidates.hpp"

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/mesh.hpp"
#include "autoddl/search/pipeline.hpp"

namespace autoddl::search {

namespace {

// Ordered factorizations of `rest` into factors >= 2, at most max_dims of them.
void factorizations(int rest, int max_dims, std::vector<int>& cur, std::vector<std::vector<int>>& out) {
  if (rest == 1) {
    out.push_back(cur);
    return;
  }
  if (static_cast<int>(cur.size()) == max_dims) return;
  for (int f = 2; f <= rest; ++f) {
    if (rest % f) continue;
    cur.push_back(f);
    factorizations(rest / f, max_dims, cur, out);
    cur.pop_back();
  }
}

bool node_aligned(const costmodel::ClusterSpec& c, const std::vector<int>& mesh) {
  try {
    costmodel::make_mesh(c, mesh, "mesh");
    return true;
  } catch (const InputError&) {
    return false;
  }
}

}  // namespace

std::vector<MeshCandidate> mesh_candidates(const costmodel::Graph& g, const costmodel::ClusterSpec& c, int devices) {
  std::vector<MeshCandidate> out;
  std::vector<std::vector<int>> sbp;
  std::vector<int> cur;
  factorizations(devices, costmodel::kMaxMeshDims, cur, sbp);
  for (const auto& m : sbp) {
    if (!m.empty() && node_aligned(c, m)) out.push_back({m, -1});
  }
  int layers = 0;
  layer_of_ops(g, layers);
  // pp need not divide the layers: the stage partition (partition_stages, a min-max DP over
  // layers) splits them unevenly, as Megatron-Core's pipeline layouts do (the grid's
  // balanced_pipeline_layout), so every pp the grid can run is a mesh here too.
  // A pipeline needs a micro-batch count that is a multiple of its stages and divides the batch
  // (SearchContext::configure's ladder), so pp must divide the batch: DeepSeek-V3's preset batch
  // of 8 has no pp=16 mesh.
  for (int pp = 2; pp < devices && pp <= layers; ++pp) {  // at least one SBP dim beside
    if (devices % pp || g.batch % pp) continue;
    std::vector<std::vector<int>> subs;
    factorizations(devices / pp, costmodel::kMaxMeshDims - 1, cur, subs);
    for (const auto& sub : subs) {
      std::vector<int> m{pp};
      m.insert(m.end(), sub.begin(), sub.end());
      if (node_aligned(c, m)) out.push_back({m, 0});
    }
  }
  return out;
}

std::string mesh_label(const MeshCandidate& m) {
  std::string name;
  for (size_t d = 0; d < m.mesh.size(); ++d) {
    if (static_cast<int>(d) == m.pipeline_dim) {
      name += "pp" + std::to_string(m.mesh[d]) + (m.mesh.size() > 1 ? " x " : "");
      continue;
    }
    name += (name.empty() || name.back() == ' ' ? "" : "x") + std::to_string(m.mesh[d]);
  }
  return name;
}

}  // namespace autoddl::search
