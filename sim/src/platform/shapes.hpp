// The topology shapes the platform builder composes, one file each: a node (node.cpp: GPUs
// on an NVSwitch star plus a NIC), and the networks that connect nodes (star.cpp,
// fat_tree.cpp). platform.cpp picks the network from the ClusterSpec.
#pragma once
#include "autoddl/sim/platform.hpp"

namespace autoddl::sim::platform {

using NetPoint = simgrid::kernel::routing::NetPoint;

struct NodeZone {
  sg4::NetZone* zone = nullptr;
  NetPoint* gateway = nullptr;  // where the node's traffic enters and leaves (the NIC)
};

// Builds node `node` (GPU hosts gpu<d>, d = node·gpus_per_node + local) under `parent`
// (nullptr: the node is the root zone) and records its GPUs and NIC link in `out`.
NodeZone build_node(const costmodel::ClusterSpec& c, int node, double gpu_flops,
                    const sg4::NetZone* parent, Platform& out);

void build_star_network(const costmodel::ClusterSpec& c, double gpu_flops, Platform& out);
void build_fat_tree_network(const costmodel::ClusterSpec& c, double gpu_flops, Platform& out);

}  // namespace autoddl::sim::platform
