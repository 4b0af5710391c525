// Where the analytical model assumes full bisection and the network has less, the simulation is
// slower exactly there and the SimReport says so: on an 8:1 oversubscribed fat tree, a pipeline
// whose two stages sit on different leaves pushes every stage-boundary send through the leaf
// uplinks, the sends take several times their α-β time, and the discrepancy names the send/recv
// part and the fabric links they were contended on.
#include <catch2/catch.hpp>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/zoo.hpp"
#include "autoddl/sim/report.hpp"

using namespace autoddl;

TEST_CASE("on an oversubscribed fat tree the SimReport names the contended fabric links", "[sim][lowering]") {
  auto c = costmodel::resolve_cluster("dgx-a100", 32);  // two leaves of 16 nodes
  c.inter.oversubscription = 8;
  const auto g = costmodel::build_zoo_model("gpt", costmodel::parse_knob_list("layers=4,hidden=1024,heads=16,seq=2048,batch=256"));
  // Whole activations cross the fabric (no scatter/gather), so the pipeline sends contend.
  const auto s = costmodel::make_scheme("megatron:tp=8,pp=2,dp=16,mb=1,sg=0", g, c, {});
  sim::SimOptions o;
  o.fidelity = sim::Fidelity::flow;
  const sim::SchemeSimulation run = sim::simulate_scheme(g, c, s, o);
  const sim::SimReport& r = run.report;
  CHECK(run.lowered.replicas_folded == 1);  // automatic folding would drop the other replicas' sends
  bool sends_slowed = false;
  for (const sim::CollectiveUse& u : r.collectives)
    if (u.phase == sim::Phase::pipeline) sends_slowed = u.simulated_s > 3 * u.alpha_beta_s;
  CHECK(sends_slowed);
  CHECK(r.iteration_s > r.analytical_iteration_s * 1.10);
  CHECK(r.discrepancy_part == "send_recv");
  REQUIRE_FALSE(r.contended_links.empty());
  for (const std::string& link : r.contended_links) CHECK(link.find("node") == std::string::npos);  // fabric, not NICs
  WARN(r.discrepancy);
}
