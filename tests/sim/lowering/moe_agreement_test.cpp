// Mixture-of-Experts steps simulated against the analytical model of the same scheme (issue 29):
// an 8-GPU Qwen3-30B-A3B step with expert parallelism (ep alone, with etp = tp, and spread over
// the tensor-parallel ranks) within 10%, and an expert-parallel group over two nodes, whose
// all-to-all crosses the NICs, within 10% with SimGrid's flows.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/zoo.hpp"
#include "autoddl/sim/report.hpp"

using namespace autoddl;

namespace {
sim::SimReport simulate(const std::string& knobs, int nodes, const std::string& spec, sim::Fidelity fidelity) {
  const auto c = costmodel::resolve_cluster("dgx-h100", nodes);
  const auto g = costmodel::build_zoo_model("qwen3-30b-a3b", costmodel::parse_knob_list(knobs));
  const costmodel::Scheme s = costmodel::make_scheme(spec, g, c, {});
  sim::SimOptions o;
  o.fidelity = fidelity;
  return sim::simulate_scheme(g, c, s, o).report;
}
}  // namespace

TEST_CASE("an 8-GPU Qwen3-30B-A3B step with expert parallelism simulates within 10% of the analytical model",
          "[sim][lowering][moe]") {
  for (const char* spec : {"megatron:tp=1,pp=1,dp=8,ep=8", "megatron:tp=2,pp=1,dp=4,ep=4,sp=1",
                           "megatron:tp=2,pp=1,dp=4,ep=8,etp=1,sp=1,dist_opt=1"}) {
    INFO(spec);
    const sim::SimReport r = simulate("", 1, spec, sim::Fidelity::step);
    INFO("simulated " << r.iteration_s << " s, analytical " << r.analytical_iteration_s << " s");
    CHECK(r.analytical_iteration_s > 0);
    CHECK(std::abs(r.relative_difference) <= 0.10);
  }
}

TEST_CASE("an expert-parallel all-to-all over two nodes simulates within 10% of the analytical model",
          "[sim][lowering][moe]") {
  const sim::SimReport r = simulate("layers=2,batch=16", 2, "megatron:tp=1,pp=1,dp=16,ep=16", sim::Fidelity::flow);
  INFO("simulated " << r.iteration_s << " s, analytical " << r.analytical_iteration_s << " s");
  CHECK(std::abs(r.relative_difference) <= 0.10);
}
