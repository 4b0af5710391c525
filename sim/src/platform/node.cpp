// One cluster node as a SimGrid star zone. Multi-GPU node (NVSwitch): every GPU has one
// split-duplex port link to the switch at the intra-node rate (per GPU, per direction, after
// efficiency), and the NIC router hangs off the switch through the node's NIC link (all NICs
// aggregated, after efficiency). Single-GPU node: the GPU's only link is the NIC.
//
//            (network)                        (network)
//                |  node3-gw gateway               |  node3-gw gateway
//            [node3-nic] link: NIC bw, ℓn          |
//                |                              [node3-nic] link: NIC bw, α_inter/2
//     +----------+----------+ NVSwitch             |
//     |          |          |                    gpu3
//   [port]     [port] ... [port]  intra bw, α_intra/2
//     |          |          |
//   gpu24      gpu25  ... gpu31
//
// Latencies: a GPU-GPU route inside a node is port + port = α_intra; across nodes it is
// port + NIC + (fabric, latency 0) + NIC + port = α_inter with ℓn = (α_inter − α_intra) / 2,
// so every route's latency equals the α of costmodel's tier for that pair.
#include <algorithm>
#include <string>

#include "autoddl/costmodel/error.hpp"
#include "shapes.hpp"

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(autoddl_sim_node, autoddl_sim, "autoddl: node zones (NVSwitch + NIC)");

namespace autoddl::sim::platform {

namespace {
using Dir = sg4::LinkInRoute::Direction;

// A split-duplex link whose _UP half carries traffic leaving `np`, declared as np's link to
// the centre of a star zone.
sg4::Link* attach(sg4::NetZone* zone, NetPoint* np, const std::string& name, double bw,
                  double latency_s) {
  sg4::Link* l = zone->create_split_duplex_link(name, bw)->set_latency(latency_s)->seal();
  zone->add_route(np, nullptr, nullptr, nullptr, {{l, Dir::UP}}, true);
  return l;
}
}  // namespace

NodeZone build_node(const costmodel::ClusterSpec& c, int node, double gpu_flops,
                    const sg4::NetZone* parent, Platform& out) {
  const std::string name = "node" + std::to_string(node);
  const int g = c.gpus_per_node;
  sg4::NetZone* zone = sg4::create_star_zone(name);
  if (parent) zone->set_parent(parent);
  NodeZone nz{zone, nullptr};
  const double nic_bw = c.node_nic_bw_bytes_per_s();

  if (g == 1) {
    int d = node;
    sg4::Host* gpu = zone->create_host("gpu" + std::to_string(d), gpu_flops)->seal();
    sg4::Link* nic = attach(zone, gpu->get_netpoint(), name + "-nic", nic_bw, c.inter.latency_s / 2);
    nz.gateway = zone->create_router(name + "-gw");
    // The gateway sits at the star's centre: no links of its own.
    zone->add_route(nz.gateway, nullptr, nullptr, nullptr, {}, true);
    out.gpus[static_cast<size_t>(d)] = gpu;
    out.nics[static_cast<size_t>(node)] = nic;
  } else {
    const double port_latency_s = c.intra.latency_s / 2;
    double nic_latency_s = (c.inter.latency_s - c.intra.latency_s) / 2;
    if (nic_latency_s < 0) {
      XBT_WARN("inter-node latency %g s is below the intra-node %g s: inter-node routes get %g s",
               c.inter.latency_s, c.intra.latency_s, c.intra.latency_s);
      nic_latency_s = 0;
    }
    for (int j = 0; j < g; ++j) {
      int d = node * g + j;
      std::string gname = "gpu" + std::to_string(d);
      sg4::Host* gpu = zone->create_host(gname, gpu_flops)->seal();
      attach(zone, gpu->get_netpoint(), gname + "-port", c.intra_bw_bytes_per_s(), port_latency_s);
      out.gpus[static_cast<size_t>(d)] = gpu;
    }
    nz.gateway = zone->create_router(name + "-gw");
    // Declared DOWN so that the link's _UP half is the node's outgoing direction, as for GPUs.
    sg4::Link* nic = zone->create_split_duplex_link(name + "-nic", nic_bw)->set_latency(nic_latency_s)->seal();
    zone->add_route(nz.gateway, nullptr, nullptr, nullptr, {{nic, Dir::DOWN}}, true);
    out.nics[static_cast<size_t>(node)] = nic;
  }
  zone->seal();
  XBT_DEBUG("%s: %d GPUs at %g flop/s, NIC %g B/s", name.c_str(), g, gpu_flops, nic_bw);
  return nz;
}

}  // namespace autoddl::sim::platform
