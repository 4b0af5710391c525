// Nodes on a two-level fat tree (SimGrid's create_fatTree_zone, d-mod-k routing) with the
// spec's oversubscription r at the leaf switches. N nodes = L leaves × m nodes, m the largest
// divisor of N that is at most kMaxNodesPerLeaf and below N; each leaf has u = floor(m / r)
// uplinks (at least 1), one to each of u spine switches.
//
//              [spine0]  ...  [spine u-1]          level 2: u switches
//               /    \         /     \            (every leaf to every spine)
//         [leaf0]   [leaf1] ... [leaf L-1]         level 1: L switches, u uplinks each
//         /  |  \    / | \        / | \            (m nodes per leaf)
//      node0 .. node<m-1> ...                      level 0: node zones (node.cpp)
//
// create_fatTree_zone gives every fabric link one bandwidth, so links run at m·B/(r·u) with B
// the node's NIC bandwidth: a leaf's uplinks then total exactly m·B/r, and its downlinks
// (never below B) leave the node's own NIC link as the per-node limit. Fabric links have zero
// latency: all of α_inter sits in the nodes' NIC links, so every route has the same latency
// whatever its hop count. N without a divisor in [2, N) (prime, or N < 4) gets one switch and
// no oversubscription.
#include <algorithm>
#include <cmath>
#include <string>

#include "shapes.hpp"

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(autoddl_sim_fat_tree, autoddl_sim, "autoddl: fat-tree network of nodes");

namespace autoddl::sim::platform {

namespace {
// A common leaf radix split (e.g. 32-port leaves with half the ports down).
constexpr int kMaxNodesPerLeaf = 16;

int nodes_per_leaf(int n) {
  for (int m = std::min(kMaxNodesPerLeaf, n - 1); m >= 2; --m) {
    if (n % m == 0) return m;
  }
  return n;
}
}  // namespace

void build_fat_tree_network(const costmodel::ClusterSpec& c, double gpu_flops, Platform& out) {
  const int n = c.nodes;
  const int m = nodes_per_leaf(n);
  const double r = c.inter.oversubscription;
  const double nic_bw = c.node_nic_bw_bytes_per_s();
  auto node_cb = [&](sg4::NetZone* zone, const std::vector<unsigned long>& /*coord*/, unsigned long id) {
    NodeZone nz = build_node(c, static_cast<int>(id), gpu_flops, zone, out);
    return std::make_pair(nz.zone->get_netpoint(), nz.gateway);
  };
  sg4::NetZone* tree = nullptr;
  if (m == n) {
    if (r > 1) XBT_WARN("%d nodes fit one switch: oversubscription %g ignored", n, r);
    tree = sg4::create_fatTree_zone("fabric", nullptr, {1, {static_cast<unsigned>(n)}, {1}, {1}},
                                    sg4::ClusterCallbacks(node_cb), nic_bw, 0, sg4::Link::SharingPolicy::SPLITDUPLEX);
  } else {
    const int uplinks = std::max(1, static_cast<int>(std::floor(m / r)));
    const double link_bw = m * nic_bw / (r * uplinks);
    tree = sg4::create_fatTree_zone(
        "fabric", nullptr,
        {2, {static_cast<unsigned>(m), static_cast<unsigned>(n / m)}, {1, static_cast<unsigned>(uplinks)}, {1, 1}},
        sg4::ClusterCallbacks(node_cb), link_bw, 0, sg4::Link::SharingPolicy::SPLITDUPLEX);
    XBT_DEBUG("fat tree: %d leaves of %d nodes, %d spines, links %g B/s", n / m, m, uplinks, link_bw);
  }
  tree->seal();
}

}  // namespace autoddl::sim::platform
