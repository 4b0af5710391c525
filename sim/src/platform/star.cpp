// Nodes on one non-blocking switch: a star zone whose members are the node zones, entered and
// left through each node's gateway. The star adds no links: a node's NIC link (node.cpp) is
// its only connection, so the switch is ideal (infinite backplane, zero latency).
//
//                        [switch]
//            +-----------+---+-----------+
//            |           |               |
//        node0-gw    node1-gw   ...  node<N-1>-gw
//        (node0)     (node1)         (node<N-1>)
#include <string>

#include "shapes.hpp"

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(autoddl_sim_star, autoddl_sim, "autoddl: star network of nodes");

namespace autoddl::sim::platform {

void build_star_network(const costmodel::ClusterSpec& c, double gpu_flops, Platform& out) {
  sg4::NetZone* root = sg4::create_star_zone("cluster");
  for (int n = 0; n < c.nodes; ++n) {
    NodeZone nz = build_node(c, n, gpu_flops, root, out);
    root->add_route(nz.zone->get_netpoint(), nullptr, nz.gateway, nullptr, {}, true);
  }
  root->seal();
  XBT_DEBUG("star of %d nodes", c.nodes);
}

}  // namespace autoddl::sim::platform
