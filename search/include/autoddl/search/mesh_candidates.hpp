// The meshes `cd-mesh` searches over the same devices: every SBP mesh of 1 to 3 dims (each dim a
// factor >= 2), and every pipeline mesh [pp, sub...]: pp >= 2 stages dividing the devices and at
// most the layer count (Op::block runs; an uneven split is partitioned by work, as the grid's
// layouts are), dim 0 (outermost, across nodes, as Megatron-LM orders ranks), times each SBP
// mesh of the remaining devices (1 or 2 dims). Only meshes the cluster
// can hold node-aligned (costmodel::make_mesh) are listed.
#pragma once
#include <string>
#include <vector>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/graph.hpp"

namespace autoddl::search {

struct MeshCandidate {
  std::vector<int> mesh;
  int pipeline_dim = -1;  // 0 or -1
};

std::vector<MeshCandidate> mesh_candidates(const costmodel::Graph& g, const costmodel::ClusterSpec& c, int devices);

// "16x8", or "pp8 x 4x4" for a pipeline mesh.
std::string mesh_label(const MeshCandidate& m);

}  // namespace autoddl::search
