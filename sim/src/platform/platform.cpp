// Platform builder entry points: the α-β network configuration and the choice of shape
// (one node alone, nodes on a star, nodes on a fat tree) from the ClusterSpec.
#include <cmath>
#include <string>

#include "autoddl/costmodel/error.hpp"
#include "shapes.hpp"

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(autoddl_sim_platform, autoddl_sim, "autoddl: platform builder");

namespace autoddl::sim {

void configure_alpha_beta_network() {
  // CM02 is LV08's max-min solver without its TCP corrections (latency ×13.01, bandwidth
  // ×0.97, weight-S); cross-traffic would add 5% on bidirectional patterns; 3.32 cannot turn
  // TCP windowing off (TCP-gamma:0 arrived in 3.34), so the window is made huge.
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  // CM02's latency and bandwidth factors are 1; calibrated per-size factors will go in the
  // network model's factor callbacks, which 3.32 refuses to mix with the factor options.
  sg4::Engine::set_config("network/TCP-gamma:1e30");
}

Platform build_platform(const costmodel::ClusterSpec& c, costmodel::DType dtype) {
  auto bad = [](const std::string& field, const std::string& reason) {
    return InputError("cluster", field, reason);
  };
  if (c.nodes < 1) throw bad("nodes", "must be >= 1");
  if (c.gpus_per_node < 1) throw bad("gpus_per_node", "must be >= 1");
  const double flops = c.gpu.peak_flops(dtype);
  if (!(flops > 0))
    throw bad("gpu", "no peak FLOP/s for " + std::string(costmodel::dtype_name(dtype)));
  if (c.gpus_per_node > 1 && !(c.intra_bw_bytes_per_s() > 0))
    throw bad("intra.bw_bytes_per_s", "a node with several GPUs needs an intra-node fabric");
  if (c.nodes > 1 && !(c.node_nic_bw_bytes_per_s() > 0))
    throw bad("inter.nic_bw_bytes_per_s", "several nodes need a network");
  if (c.inter.nics_per_node < 1) throw bad("inter.nics_per_node", "must be >= 1");

  Platform p;
  p.gpus_per_node = c.gpus_per_node;
  p.nics_per_node = c.inter.nics_per_node;
  p.gpus.resize(static_cast<size_t>(c.total_gpus()));
  p.nic_out.resize(static_cast<size_t>(c.nodes));
  p.nic_in.resize(static_cast<size_t>(c.nodes));
  if (c.nodes == 1) {
    platform::build_node(c, 0, flops, nullptr, p);
  } else if (c.inter.topology == "fat-tree") {
    platform::build_fat_tree_network(c, flops, p);
  } else if (c.inter.topology == "star") {
    platform::build_star_network(c, flops, p);
  } else {
    throw bad("inter.topology", "unknown topology '" + c.inter.topology + "' (star, fat-tree)");
  }
  XBT_VERB("platform: %d nodes x %d GPUs, %s", c.nodes, c.gpus_per_node, c.inter.topology.c_str());
  return p;
}

}  // namespace autoddl::sim
