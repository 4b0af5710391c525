// simulate_scheme runs the GPUs at the peak of the plan's training dtype (the parameters'), so
// `autoddl simulate` needs no rule of its own for it.
#include <catch2/catch.hpp>

#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/zoo.hpp"
#include "autoddl/sim/lowering.hpp"

using namespace autoddl;

TEST_CASE("a lowered program carries the plan's training dtype", "[sim][lowering]") {
  const auto c = costmodel::resolve_cluster("dgx-a100", 1);
  for (const char* dtype : {"fp32", "bf16", "fp16"}) {
    const auto g = costmodel::build_zoo_model(
        "gpt", costmodel::parse_knob_list(std::string("layers=1,hidden=256,heads=4,seq=64,batch=8,dtype=") + dtype));
    const sim::LoweredProgram p = sim::lower_scheme(g, c, costmodel::make_scheme("dp", g, c, {}));
    costmodel::DType want;
    REQUIRE(costmodel::parse_dtype(dtype, want));
    CHECK(p.train_dtype == want);
  }
}
