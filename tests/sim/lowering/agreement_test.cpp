// The simulated iteration of a lowered scheme against the analytical model of the same scheme:
// on one node (nothing shared but what costmodel already shares) they agree within 1%; for
// every expert scheme on gpt and bert on 2–8 DGX A100 nodes they agree within 10%, or the
// SimReport's discrepancy names the part that differs (and the contended links).
#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/zoo.hpp"
#include "autoddl/sim/report.hpp"

using namespace autoddl;

namespace {
// Small knobs: simulations of a few thousand tasks each.
constexpr const char* kGpt = "layers=8,hidden=512,heads=8,seq=256,batch=64";
constexpr const char* kBert = "layers=8,hidden=512,heads=8,seq=128,batch=64";

// Expert schemes on the default mesh, except owt ("one weird trick": every dim model-parallel)
// on a flat mesh of all GPUs: on [nodes, 8] costmodel's owt splits attention heads over both dims
// and 8 heads do not divide 8·nodes.
std::vector<std::string> expert_schemes(int nodes) {
  const int gpus = 8 * nodes;
  const std::string n = std::to_string(nodes);
  return {"dp",
          "zero1",
          "zero3",
          "owt",
          "megatron:tp=8,pp=1,dp=" + n,
          "megatron:tp=4,pp=2,dp=" + n + ",mb=" + std::to_string(64 / (nodes * 4)),
          "megatron:tp=8,pp=" + n + ",dp=1,mb=8",
          "megatron:tp=8,pp=2,dp=" + std::to_string(nodes / 2) + ",interleave=2,mb=" + std::to_string(2 * 8 / nodes),
          "megatron:tp=8,pp=2,dp=" + std::to_string(nodes / 2) + ",schedule=gpipe,mb=" + std::to_string(2 * 8 / nodes),
          "megatron:tp=4,pp=1,dp=" + std::to_string(gpus / 4) + ",sp=1,recompute=selective"};
}

struct Row {
  std::string line;
  bool within = false;
};

Row simulate_one(const std::string& model, const char* knobs, int nodes, const std::string& spec) {
  const auto c = costmodel::resolve_cluster("dgx-a100", nodes);
  const auto g = costmodel::build_zoo_model(model, costmodel::parse_knob_list(knobs));
  costmodel::Scheme s;
  try {
    s = costmodel::make_scheme(spec, g, c, spec == "owt" ? std::vector<int>{8 * nodes} : std::vector<int>{});
  } catch (const InputError& e) {
    return {model + " " + std::to_string(nodes) + " " + spec + ": not lowered by costmodel: " + e.reason(), true};
  }
  sim::SimOptions o;
  o.fidelity = sim::Fidelity::flow;
  const sim::SimReport r = sim::simulate_scheme(g, c, s, o).report;
  const bool within = std::abs(r.relative_difference) <= 0.10;
  INFO(model << " on " << nodes << " nodes, " << spec);
  CHECK(r.analytical_iteration_s > 0);
  if (within) {
    CHECK(r.discrepancy.empty());
  } else {
    // The cause names a part of the iteration, and contended links when collectives slowed.
    CHECK(r.discrepancy.find("the largest difference is") != std::string::npos);
    CHECK(!r.discrepancy_part.empty());
    if (r.discrepancy.find("contended") != std::string::npos) CHECK(!r.contended_links.empty());
  }
  std::ostringstream line;
  line.precision(4);
  line << model << "\t" << nodes << "\t" << spec << "\t" << r.iteration_s * 1e3 << " ms\t"
       << r.analytical_iteration_s * 1e3 << " ms\t" << std::showpos << r.relative_difference * 100 << std::noshowpos
       << "%\t" << (within ? "" : r.discrepancy_part);
  return {line.str(), within};
}
}  // namespace

TEST_CASE("on one node the simulated iteration of a scheme matches the analytical model within 1%",
          "[sim][lowering]") {
  const auto c = costmodel::resolve_cluster("dgx-a100", 1);
  for (const auto& [model, knobs] : {std::pair{"gpt", kGpt}, {"bert", kBert}}) {
    const auto g = costmodel::build_zoo_model(model, costmodel::parse_knob_list(knobs));
    for (const std::string spec : {"dp", "zero1", "zero3", "megatron:tp=8,pp=1,dp=1,mb=16", "megatron:tp=2,pp=1,dp=4"}) {
      INFO(model << " " << spec);
      const sim::SimReport r = sim::simulate_scheme(g, c, costmodel::make_scheme(spec, g, c, {})).report;
      CHECK(r.iteration_s == Approx(r.analytical_iteration_s).epsilon(0.01));
    }
  }
}

TEST_CASE("every expert scheme on gpt and bert on 2-8 DGX A100 nodes agrees with the analytical model within 10% "
          "or names the cause",
          "[sim][lowering]") {
  std::ostringstream table;
  table << "model\tnodes\tscheme\tsimulated\tanalytical\tdifference\tdiscrepancy part\n";
  int rows = 0, within = 0;
  for (const auto& [model, knobs] : {std::pair{"gpt", kGpt}, {"bert", kBert}}) {
    for (int nodes : {2, 4, 8}) {
      for (const std::string& spec : expert_schemes(nodes)) {
        const Row r = simulate_one(model, knobs, nodes, spec);
        table << r.line << "\n";
        ++rows;
        within += r.within;
      }
    }
  }
  WARN(within << " of " << rows << " within 10%\n" << table.str());
}
