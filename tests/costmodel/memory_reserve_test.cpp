// The memory reserve (GpuSpec::memory_reserve_bytes, issue 34 item 2): what training cannot use of
// a GPU's memory (driver, CUDA context, NCCL buffers) is kept out of the feasibility check, the
// report carries the capacity left and the reserve, and the reason of an infeasible scheme names it.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/cost_report.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/zoo.hpp"

using namespace autoddl::costmodel;

TEST_CASE("a scheme that fits the GPU but not the GPU less its reserve is infeasible", "[costmodel][memory]") {
  ClusterSpec c = resolve_cluster("dgx-h100", 1);
  const Graph g = build_zoo_model("gpt", parse_knob_list("layers=4,hidden=1024,heads=16,seq=1024,batch=8"));
  const Scheme s = make_scheme("dp", g, c, {});
  c.gpu.memory_reserve_bytes = 0;
  const CostReport none = evaluate(g, c, s);
  REQUIRE(none.feasible);
  const double peak = none.peak_memory_bytes;
  CHECK(none.memory_capacity_bytes == c.gpu.memory_bytes);

  // 1 GB above the peak: a 0.5 GB reserve still fits, a 2 GB one does not.
  c.gpu.memory_bytes = peak + 1e9;
  c.gpu.memory_reserve_bytes = 0.5e9;
  const CostReport small = evaluate(g, c, s);
  CHECK(small.feasible);
  CHECK(small.memory_capacity_bytes == Approx(peak + 0.5e9));
  CHECK(small.memory_reserve_bytes == 0.5e9);
  CHECK(to_json(small)["memory_margin_bytes"].get<double>() == Approx(0.5e9));
  CHECK(small.iteration_s == Approx(none.iteration_s));  // the reserve moves feasibility, not time

  c.gpu.memory_reserve_bytes = 2e9;
  const CostReport big = evaluate(g, c, s);
  CHECK_FALSE(big.feasible);
  CHECK(big.infeasible_reason.find("reserve") != std::string::npos);
  CHECK(to_json(big)["memory_margin_bytes"].get<double>() == Approx(-1e9));
}

TEST_CASE("the H100 preset keeps about 2 GB in reserve and still fits the published tight rows",
          "[costmodel][memory]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 1);
  // 80 GiB less 2001 MiB: the nvidia-smi gap, the driver's reservation and a runtime estimate.
  CHECK(c.gpu.memory_reserve_bytes == 2001.0 * 1048576);
  CHECK(c.sources.count("gpu.memory_reserve_bytes") == 1);
  CHECK(usable_memory_bytes(c.gpu) < 81559.0 * 1048576);  // below what nvidia-smi reports
}
