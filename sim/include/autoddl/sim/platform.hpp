// Platform builder: a ClusterSpec as SimGrid 3.32 hosts, links and zones. One GPU = one host
// whose speed is the GPU's peak FLOP/s for the simulated dtype; a multi-GPU node is a star
// zone (NVSwitch) of per-GPU split-duplex links plus a NIC router; a single-GPU node is its
// GPU behind the NIC link; nodes hang off a star or a fat tree (sim/src/platform/<shape>.cpp).
// A node's NICs are one link per direction whose capacity grows with the number of flows,
// min(flows, nics)·(one NIC): one flow uses one NIC, as NCCL maps a channel or a peer to one
// NIC, and enough flows use them all (SimGrid's NONLINEAR sharing policy).
// Link latencies are placed so that every route's total latency is the α the analytical
// model uses for that pair (intra.latency_s inside a node, inter.latency_s across nodes) and
// link bandwidths include the spec's efficiencies, so uncontended transfers take α + S·β.
#pragma once
#include <vector>

#include <simgrid/s4u.hpp>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/dtype.hpp"

namespace autoddl::sim {

namespace sg4 = simgrid::s4u;

struct Platform {
  std::vector<sg4::Host*> gpus;   // by global device id (node-major)
  std::vector<sg4::Link*> nic_out;  // per node: traffic leaving it ("node<n>-nic-out")
  std::vector<sg4::Link*> nic_in;   // per node: traffic entering it ("node<n>-nic-in")
  int gpus_per_node = 1;
  int nics_per_node = 1;
  int node_of(int device) const { return device / gpus_per_node; }
};

// Sets the network model so transfers follow α-β exactly (CM02, no cross-traffic, no TCP
// window cap, latency and bandwidth factors 1). Call once, after creating the Engine and
// before building the platform.
void configure_alpha_beta_network();

// Builds the whole platform under a new root zone. Throws InputError("cluster", field, reason)
// for specs it cannot express (no GPU peak for dtype, multi-GPU node with no intra fabric).
Platform build_platform(const costmodel::ClusterSpec& c, costmodel::DType dtype);

}  // namespace autoddl::sim
