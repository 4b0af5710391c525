// Two-rank ping-pong: two single-GPU nodes on a star (25 GB/s NICs, 5 us end to end), one
// actor per GPU bouncing a 1 MiB message through mailboxes. Each leg takes α + S/B =
// 5 us + 1 MiB / 25 GB/s = 46.94 us, as the α-β model says (CM02, no cross-traffic).
#include <simgrid/s4u.hpp>

#include "autoddl/sim/engine_argv.hpp"
#include "autoddl/sim/platform.hpp"

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(autoddl_example_ping_pong, autoddl_sim, "ping-pong example");

namespace sg4 = simgrid::s4u;
using namespace autoddl;

static constexpr double kBytes = 1 << 20;
static int ball;  // what travels; only its simulated size matters

static void pinger(sg4::Mailbox* out, sg4::Mailbox* in) {
  const double start = sg4::Engine::get_clock();
  out->put(&ball, kBytes);
  in->get<int>();
  XBT_INFO("round trip of %.0f bytes: %.2f us", kBytes, (sg4::Engine::get_clock() - start) * 1e6);
}

static void ponger(sg4::Mailbox* in, sg4::Mailbox* out) {
  in->get<int>();
  XBT_INFO("ping received");
  out->put(&ball, kBytes);
}

int main(int argc, char** argv) {
  xbt_log_control_set("xbt_cfg.thres:warning");
  sim::EngineArgv args(argc, argv);
  sg4::Engine e(args.argc(), args.argv());
  sim::configure_alpha_beta_network();
  costmodel::ClusterSpec c;
  c.name = "two-nodes";
  c.nodes = 2;
  c.gpus_per_node = 1;
  c.gpu.peak_flops_fp16 = 1e14;
  c.intra.fabric = "none";
  c.inter = {.nics_per_node = 1, .nic_bw_bytes_per_s = 25e9, .latency_s = 5e-6, .efficiency = 1, .topology = "star"};
  const sim::Platform p = sim::build_platform(c, costmodel::DType::fp16);

  sg4::Mailbox* to_gpu1 = sg4::Mailbox::by_name("gpu1");
  sg4::Mailbox* to_gpu0 = sg4::Mailbox::by_name("gpu0");
  sg4::Actor::create("ping", p.gpus[0], pinger, to_gpu1, to_gpu0);
  sg4::Actor::create("pong", p.gpus[1], ponger, to_gpu1, to_gpu0);
  e.run();
  XBT_INFO("simulation ends at %.2f us", sg4::Engine::get_clock() * 1e6);
  return 0;
}
