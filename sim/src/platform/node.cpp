// One cluster node as a SimGrid star zone. Multi-GPU node (NVSwitch): every GPU has one
// split-duplex port link to the switch at the intra-node rate (per GPU, per direction, after
// efficiency); the gateway router hangs off the switch through the node's NIC links. Single-
// GPU node: the GPU's own links are the NIC links, and the gateway sits at the centre.
//
//     multi-GPU node                              single-GPU node
//            (network)                                 (network)
//                |                                         |
//           [node3-gw]                                [node1-gw]
//                |  node3-nic-out / -nic-in: NICs, ℓn      |  (no link)
//     +----------+----------+  NVSwitch                    |  node1-nic-out / -nic-in:
//     |          |          |                            gpu1  NICs, α_inter/2
//  gpu24-port gpu25-port .. gpu31-port: intra bw, α_intra/2
//     |          |          |
//   gpu24      gpu25  ... gpu31
//
// NIC links: one link per direction (full duplex) shared by the node's flows, with capacity
// min(flows, nics)·nic_bw·efficiency (NONLINEAR policy): one flow gets one NIC, nics flows or
// more share all of them.
// Latencies: a GPU-GPU route inside a node is port + port = α_intra; across nodes it is
// port + NIC + (fabric, latency 0) + NIC + port = α_inter with ℓn = (α_inter − α_intra) / 2,
// so every route's latency equals the α of costmodel's tier for that pair.
#include <algorithm>
#include <string>

#include "shapes.hpp"

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(autoddl_sim_node, autoddl_sim, "autoddl: node zones (NVSwitch + NIC)");

namespace autoddl::sim::platform {

namespace {
using Dir = sg4::LinkInRoute::Direction;

// The node's NICs in one direction: `nics` NICs of `one_nic_bw` each.
sg4::Link* nic_link(sg4::NetZone* zone, const std::string& name, int nics, double one_nic_bw, double latency_s) {
  return zone->create_link(name, nics * one_nic_bw)
      ->set_latency(latency_s)
      ->set_sharing_policy(sg4::Link::SharingPolicy::NONLINEAR,
                           [one_nic_bw](double capacity, int flows) { return std::min(capacity, flows * one_nic_bw); })
      ->seal();
}

// `np`'s links to the star's centre: `up` carries what np sends, `down` what it receives.
void attach(sg4::NetZone* zone, NetPoint* np, sg4::Link* up, sg4::Link* down) {
  zone->add_route(np, nullptr, nullptr, nullptr, {{up, Dir::NONE}}, false);
  zone->add_route(nullptr, np, nullptr, nullptr, {{down, Dir::NONE}}, false);
}
}  // namespace

NodeZone build_node(const costmodel::ClusterSpec& c, int node, double gpu_flops, const sg4::NetZone* parent,
                    Platform& out) {
  const std::string name = "node" + std::to_string(node);
  const int g = c.gpus_per_node;
  const int nics = c.inter.nics_per_node;
  const double one_nic_bw = c.inter.nic_bw_bytes_per_s * c.inter.efficiency;
  sg4::NetZone* zone = sg4::create_star_zone(name);
  if (parent) zone->set_parent(parent);
  NodeZone nz{zone, nullptr};
  sg4::Link* nic_out = nullptr;
  sg4::Link* nic_in = nullptr;

  if (g == 1) {
    const int d = node;
    sg4::Host* gpu = zone->create_host("gpu" + std::to_string(d), gpu_flops)->seal();
    nic_out = nic_link(zone, name + "-nic-out", nics, one_nic_bw, c.inter.latency_s / 2);
    nic_in = nic_link(zone, name + "-nic-in", nics, one_nic_bw, c.inter.latency_s / 2);
    attach(zone, gpu->get_netpoint(), nic_out, nic_in);
    nz.gateway = zone->create_router(name + "-gw");
    zone->add_route(nz.gateway, nullptr, nullptr, nullptr, {}, true);  // at the centre
    out.gpus[static_cast<size_t>(d)] = gpu;
  } else {
    const double port_latency_s = c.intra.latency_s / 2;
    double nic_latency_s = (c.inter.latency_s - c.intra.latency_s) / 2;
    if (nic_latency_s < 0 && c.nodes > 1) {
      XBT_WARN("inter-node latency %g s is below the intra-node %g s: inter-node routes get %g s", c.inter.latency_s,
               c.intra.latency_s, c.intra.latency_s);
    }
    nic_latency_s = std::max(0.0, nic_latency_s);
    for (int j = 0; j < g; ++j) {
      const int d = node * g + j;
      const std::string gname = "gpu" + std::to_string(d);
      sg4::Host* gpu = zone->create_host(gname, gpu_flops)->seal();
      sg4::Link* port = zone->create_split_duplex_link(gname + "-port", c.intra_bw_bytes_per_s())
                            ->set_latency(port_latency_s)
                            ->seal();
      zone->add_route(gpu->get_netpoint(), nullptr, nullptr, nullptr, {{port, Dir::UP}}, true);
      out.gpus[static_cast<size_t>(d)] = gpu;
    }
    nic_out = nic_link(zone, name + "-nic-out", nics, one_nic_bw, nic_latency_s);
    nic_in = nic_link(zone, name + "-nic-in", nics, one_nic_bw, nic_latency_s);
    nz.gateway = zone->create_router(name + "-gw");
    attach(zone, nz.gateway, nic_in, nic_out);  // the gateway sends into the node
  }
  out.nic_out[static_cast<size_t>(node)] = nic_out;
  out.nic_in[static_cast<size_t>(node)] = nic_in;
  zone->seal();
  XBT_DEBUG("%s: %d GPUs at %g flop/s, %d NICs of %g B/s", name.c_str(), g, gpu_flops, nics, one_nic_bw);
  return nz;
}

}  // namespace autoddl::sim::platform
