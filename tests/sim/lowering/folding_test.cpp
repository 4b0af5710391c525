// Folding data-parallel replicas (replica 0 computes, the others join only collectives that span
// a folded dim) and merging runs of compute into one task change the task count, not the
// iteration: with symmetric replicas the simulated time is the same as the full per-op program's.
// Only replicas on other nodes fold (a replica sharing a node would share its NICs).
#include <catch2/catch.hpp>
#include "../alpha_beta_cluster.hpp"

#include <string>

#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/zoo.hpp"
#include "autoddl/sim/lowering.hpp"
#include "autoddl/sim/simulate.hpp"

using namespace autoddl;
using sim::LoweringMode;

TEST_CASE("folding replicas and merging compute leave the simulated iteration unchanged", "[sim][lowering]") {
  const auto c = autoddl::sim_test::alpha_beta_cluster("dgx-a100", 4);
  const auto gpt = costmodel::build_zoo_model("gpt", costmodel::parse_knob_list("layers=4,hidden=512,heads=8,seq=256,batch=64"));
  for (const auto& [spec, replicas] :
       {std::pair{"dp", 4}, {"zero3", 4}, {"megatron:tp=8,pp=1,dp=4", 4}, {"megatron:tp=8,pp=2,dp=2,mb=4", 2},
        {"megatron:tp=8,pp=2,dp=2,mb=4,interleave=2", 2}, {"megatron:tp=4,pp=2,dp=4,mb=4", 1}}) {
    INFO(spec);
    const auto s = costmodel::make_scheme(spec, gpt, c, {});
    sim::LoweringOptions full;
    full.fold_replicas = LoweringMode::off;
    full.merge_compute = LoweringMode::off;
    const sim::LoweredProgram base = sim::lower_scheme(gpt, c, s, full);
    REQUIRE(base.replicas_folded == 1);
    REQUIRE(base.computing_devices() == base.program.devices());
    const double t = sim::simulate(base.program, c).iteration_s;
    for (LoweringMode fold : {LoweringMode::off, LoweringMode::on}) {
      for (LoweringMode merge : {LoweringMode::off, LoweringMode::on}) {
        if (fold == LoweringMode::off && merge == LoweringMode::off) continue;
        sim::LoweringOptions o;
        o.fold_replicas = fold;
        o.merge_compute = merge;
        const sim::LoweredProgram lp = sim::lower_scheme(gpt, c, s, o);
        INFO("fold " << sim::lowering_mode_name(fold) << ", merge " << sim::lowering_mode_name(merge) << ": "
                     << lp.program.size() << " tasks vs " << base.program.size());
        if (fold == LoweringMode::on) {
          CHECK(lp.replicas_folded == replicas);
          CHECK(lp.computing_devices() * lp.replicas_folded == lp.program.devices());
        }
        if (merge == LoweringMode::on || replicas > 1) CHECK(lp.program.size() < base.program.size());
        CHECK(sim::simulate(lp.program, c).iteration_s == Approx(t).epsilon(1e-6));
      }
    }
  }
}

TEST_CASE("automatic lowering folds and merges only programs over the task limit", "[sim][lowering]") {
  const auto c = autoddl::sim_test::alpha_beta_cluster("dgx-a100", 2);
  const auto gpt = costmodel::build_zoo_model("gpt", costmodel::parse_knob_list("layers=4,hidden=512,heads=8,seq=256,batch=32"));
  const auto s = costmodel::make_scheme("megatron:tp=8,pp=1,dp=2", gpt, c, {});
  const sim::LoweredProgram small = sim::lower_scheme(gpt, c, s);
  CHECK(small.replicas_folded == 1);
  CHECK_FALSE(small.merged);
  sim::LoweringOptions tight;
  tight.max_tasks = 100;
  const sim::LoweredProgram big = sim::lower_scheme(gpt, c, s, tight);
  CHECK(big.replicas_folded == 2);
  CHECK(big.folded_mesh_dims == std::vector<int>{0});
  CHECK(big.merged);
}
