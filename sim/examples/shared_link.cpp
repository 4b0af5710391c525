// Two collectives sharing a link: two nodes of two GPUs, one 25 GB/s NIC each. GPU 0 and GPU 2
// all-reduce 1 GB across the network; then GPU 0/2 and GPU 1/3 do so at the same time, from
// two driver actors. A 2-rank ring all-reduce is 2 steps of α + (S/2)/B = 4 us + 20 ms alone;
// sharing the NICs, each flow gets 12.5 GB/s and each all-reduce takes twice as long.
#include <simgrid/s4u.hpp>

#include "autoddl/sim/collectives.hpp"
#include "autoddl/sim/engine_argv.hpp"
#include "autoddl/sim/platform.hpp"

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(autoddl_example_shared_link, autoddl_sim, "shared-link example");

namespace sg4 = simgrid::s4u;
using namespace autoddl;
using costmodel::CollectiveAlgo;
using costmodel::CollectiveKind;

static void all_reduce(const char* label, sim::RankGroup group, double start_at) {
  sg4::this_actor::sleep_until(start_at);
  sim::run_collective(CollectiveKind::all_reduce, CollectiveAlgo::ring, group, 1e9, sim::Fidelity::step);
  XBT_INFO("%s: all-reduce of 1 GB took %.2f ms", label, (sg4::Engine::get_clock() - start_at) * 1e3);
}

int main(int argc, char** argv) {
  xbt_log_control_set("xbt_cfg.thres:warning");
  sim::EngineArgv args(argc, argv);
  sg4::Engine e(args.argc(), args.argv());
  sim::configure_alpha_beta_network();
  costmodel::ClusterSpec c;
  c.name = "two-by-two";
  c.nodes = 2;
  c.gpus_per_node = 2;
  c.gpu.peak_flops_fp16 = 1e14;
  c.intra = {.fabric = "pcie", .bw_bytes_per_s = 100e9, .latency_s = 2e-6, .efficiency = 1};
  c.inter = {.nics_per_node = 1, .nic_bw_bytes_per_s = 25e9, .latency_s = 4e-6, .efficiency = 1, .topology = "star"};
  const sim::Platform p = sim::build_platform(c, costmodel::DType::fp16);

  sg4::Actor::create("alone", p.gpus[0], all_reduce, "gpu0+gpu2 alone", sim::RankGroup{{p.gpus[0], p.gpus[2]}}, 0.0);
  sg4::Actor::create("first", p.gpus[0], all_reduce, "gpu0+gpu2 shared", sim::RankGroup{{p.gpus[0], p.gpus[2]}}, 1.0);
  sg4::Actor::create("second", p.gpus[1], all_reduce, "gpu1+gpu3 shared", sim::RankGroup{{p.gpus[1], p.gpus[3]}}, 1.0);
  e.run();
  return 0;
}
