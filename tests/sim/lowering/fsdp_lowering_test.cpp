// FSDP in the simulator (Scheme::fsdp, issue 30): each layer's parameter gathers run on a stream
// of their own, issued when the previous layer starts (forward) or the next one (backward) and
// waited for by the layer's first compute, and every micro-batch's gradients are
// reduce-scattered. So simulate agrees with cost where the layers' compute hides the gathers
// (Llama 3 8B's layer shapes at sequence 8,192 on one DGX H100), and without the prefetch the
// same storage simulates slower.
#include <catch2/catch.hpp>

#include <string>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/zoo.hpp"
#include "autoddl/sim/lowering.hpp"
#include "autoddl/sim/report.hpp"

using namespace autoddl;

namespace {
sim::SchemeSimulation run(const costmodel::Scheme& scheme, const costmodel::Graph& g, const costmodel::ClusterSpec& c) {
  sim::SimOptions o;
  o.fidelity = sim::Fidelity::flow;
  return sim::simulate_scheme(g, c, scheme, o);
}

int tasks_on_stream(const sim::Program& p, int stream) {
  int n = 0;
  for (const sim::Task& t : p.tasks()) n += t.stream == stream;
  return n;
}
}  // namespace

TEST_CASE("fsdp's prefetched gathers simulate within 2% of cost where the layers' compute hides them",
          "[sim][lowering][fsdp]") {
  const auto c = costmodel::resolve_cluster("dgx-h100", 1);
  for (int batch : {8, 32}) {  // one micro-batch, and four (a reduce-scatter after each)
    const auto g = costmodel::build_zoo_model(
        "llama", costmodel::parse_knob_list("size=3-8b,layers=4,seq=8192,batch=" + std::to_string(batch)));
    for (const char* spec : {"megatron:tp=1,pp=1,dp=8,mb=1,fsdp=1", "megatron:tp=2,pp=1,dp=4,mb=1,sp=1,fsdp=1,tp_overlap=1"}) {
      const costmodel::Scheme s = costmodel::make_scheme(spec, g, c, {});
      const sim::SchemeSimulation f = run(s, g, c);
      INFO(spec << ", batch " << batch << ": " << f.report.iteration_s << " s simulated vs "
                << f.report.analytical_iteration_s << " s analytical");
      CHECK(f.report.iteration_s == Approx(f.report.analytical_iteration_s).epsilon(0.02));
      // The gathers run on the stream after the pipeline streams (none here).
      const int gathers = tasks_on_stream(f.lowered.program, sim::kFirstPipelineStream);
      CHECK(gathers > 0);
      // Without the prefetch (ZeRO-3 as `zero3` prices it) every gather waits on the boxing
      // stream: slower, in both the model and the simulator.
      costmodel::Scheme plain = s;
      plain.fsdp = false;
      const sim::SchemeSimulation z = run(plain, g, c);
      CHECK(tasks_on_stream(z.lowered.program, sim::kFirstPipelineStream) == 0);
      CHECK(z.report.iteration_s > f.report.iteration_s);
      CHECK(z.report.analytical_iteration_s > f.report.analytical_iteration_s);
    }
  }
}
