// Ring all-reduce of 256 MiB over 4 GPUs of one NVSwitch node (300 GB/s per GPU per
// direction, 1 us GPU to GPU), run step by step from one driver actor through the collective
// table. α-β: 2(p−1)·α + 2(p−1)/p·S/B = 6 us + 1.5 · 268435456 B / 300 GB/s = 1348.18 us.
#include <simgrid/s4u.hpp>

#include "autoddl/sim/collectives.hpp"
#include "autoddl/sim/engine_argv.hpp"
#include "autoddl/sim/platform.hpp"

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(autoddl_example_ring, autoddl_sim, "ring all-reduce example");

namespace sg4 = simgrid::s4u;
using namespace autoddl;
using costmodel::CollectiveAlgo;
using costmodel::CollectiveKind;

int main(int argc, char** argv) {
  xbt_log_control_set("xbt_cfg.thres:warning");
  sim::EngineArgv args(argc, argv);
  sg4::Engine e(args.argc(), args.argv());
  sim::configure_alpha_beta_network();
  costmodel::ClusterSpec c;
  c.name = "one-node";
  c.nodes = 1;
  c.gpus_per_node = 4;
  c.gpu.peak_flops_fp16 = 1e14;
  c.intra = {.fabric = "nvswitch", .bw_bytes_per_s = 300e9, .latency_s = 1e-6, .efficiency = 1};
  const sim::Platform p = sim::build_platform(c, costmodel::DType::fp16);

  sg4::Actor::create("driver", p.gpus[0], [&p] {
    const sim::RankGroup group{p.gpus};
    for (sim::Fidelity f : {sim::Fidelity::step, sim::Fidelity::flow}) {
      const double start = sg4::Engine::get_clock();
      sim::run_collective(CollectiveKind::all_reduce, CollectiveAlgo::ring, group, 256.0 * 1024 * 1024, f);
      XBT_INFO("ring all-reduce of 256 MiB on 4 GPUs (%s fidelity): %.2f us", sim::fidelity_name(f).data(),
               (sg4::Engine::get_clock() - start) * 1e6);
    }
  });
  e.run();
  return 0;
}
