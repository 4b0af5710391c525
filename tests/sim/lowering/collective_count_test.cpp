// A lowered program runs, per device, exactly the collectives the analytical model counts: the
// CostReport's count_by_kind (one device of the slowest stage, per iteration) equals the
// collectives that device takes part in, boxing and gradient sync by kind, and the send/recvs
// charged to its stage (received activations, sent gradients).
#include <catch2/catch.hpp>

#include <array>
#include <string>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/zoo.hpp"
#include "autoddl/sim/lowering.hpp"

using namespace autoddl;
using costmodel::CollectiveKind;

namespace {
// The stage whose per-micro-batch work is the CostReport's stage time (evaluate()'s slowest).
int slowest_stage(const costmodel::Graph& g, const costmodel::ClusterSpec& c, const costmodel::Scheme& s) {
  costmodel::IterationPlan p;
  const costmodel::CostReport r = costmodel::evaluate(g, c, s, &p);
  for (int st = 0; st < p.stages; ++st) {
    double t = 0;
    for (const auto& op : p.ops) {
      for (const auto& in : op.inputs) {  // scatter/gather: received gradients gathered here
        if (in.producer >= 0 && p.ops[static_cast<size_t>(in.producer)].stage == st)
          for (const auto& x : in.bwd_send_gather) t += x.time_s;
      }
      if (op.stage != st) continue;
      t += op.fwd_s + op.bwd_s + op.recompute_s;
      for (const auto& in : op.inputs) {
        for (const auto& x : in.fwd) t += x.time_s;
        for (const auto& x : in.bwd) t += x.time_s;
        t += in.fwd_send_s + in.bwd_send_s + in.bwd_regather_exposed_s;
        for (const auto& x : in.fwd_send_gather) t += x.time_s;
      }
    }
    if (t == Approx(r.stage_time_s).epsilon(1e-9)) return st;
  }
  FAIL("no stage has the report's stage time");
  return 0;
}
}  // namespace

TEST_CASE("a lowered program has, per device, the collectives the CostReport counts", "[sim][lowering]") {
  const auto c = costmodel::resolve_cluster("dgx-a100", 2);
  const auto gpt = costmodel::build_zoo_model("gpt", costmodel::parse_knob_list("layers=4,hidden=512,heads=8,seq=256,batch=32"));
  const auto bert = costmodel::build_zoo_model("bert", costmodel::parse_knob_list("layers=4,hidden=512,heads=8,seq=128,batch=32"));
  for (const auto& [g, spec] : {std::pair{&gpt, "dp"}, {&gpt, "zero3"}, {&bert, "zero1"}, {&gpt, "megatron:tp=8,pp=1,dp=2"},
                                {&gpt, "megatron:tp=4,pp=2,dp=2,mb=4"}, {&bert, "megatron:tp=8,pp=2,dp=1,mb=4,interleave=2"},
                                {&gpt, "megatron:tp=4,pp=1,dp=4,sp=1"}, {&bert, "megatron:tp=2,pp=4,dp=2,mb=4,schedule=gpipe"}}) {
    INFO(g->name << " " << spec);
    const auto s = costmodel::make_scheme(spec, *g, c, {});
    sim::LoweringOptions o;
    o.fold_replicas = sim::LoweringMode::off;
    const sim::LoweredProgram lp = sim::lower_scheme(*g, c, s, o);
    const int stage = slowest_stage(*g, c, s);
    int device = -1;
    for (int d = 0; d < lp.program.devices() && device < 0; ++d)
      if (lp.device_stage[static_cast<size_t>(d)] == stage) device = d;
    REQUIRE(device >= 0);
    std::array<double, costmodel::kCollectiveKindCount> count{};
    for (const sim::Task& t : lp.program.tasks()) {
      if (t.kind != sim::TaskKind::collective) continue;
      bool mine = false;
      for (int d : t.devices) mine = mine || d == device;
      if (!mine) continue;
      // A device sends and receives at both stage boundaries; its stage is charged the sends
      // labelled with it (activations in, gradients out).
      if (t.collective == CollectiveKind::send_recv && t.stage != stage) continue;
      count[static_cast<size_t>(t.collective)] += 1;
    }
    for (const auto& k : costmodel::collective_kinds()) {
      INFO(k.name << " on device " << device << " (stage " << stage << ")");
      CHECK(count[static_cast<size_t>(k.kind)] == Approx(lp.analytical.comm.count[static_cast<size_t>(k.kind)]));
    }
  }
}
