// Pins evaluate()'s memory phase (stage_memory.hpp): micro-batches in flight per schedule, a
// parameter's bytes by storage with ZeRO-1's split optimizer state, and the report's peak as the
// phase's.
#include <catch2/catch.hpp>

#include "autoddl/costmodel/compute.hpp"
#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/stage_memory.hpp"
#include "autoddl/costmodel/zoo.hpp"

using namespace autoddl::costmodel;

TEST_CASE("a stage holds the activations of the micro-batches its schedule has in flight", "[costmodel][phases]") {
  using PS = PipelineSchedule;
  CHECK(in_flight_micro_batches(0, 1, 8, PS::gpipe, 1) == 1);  // no pipeline
  CHECK(in_flight_micro_batches(0, 4, 8, PS::gpipe, 1) == 8);
  CHECK(in_flight_micro_batches(0, 4, 8, PS::one_f_one_b, 1) == 4);
  CHECK(in_flight_micro_batches(3, 4, 8, PS::one_f_one_b, 1) == 1);
  CHECK(in_flight_micro_batches(1, 4, 2, PS::one_f_one_b, 1) == 2);
  // Interleaved: (1 + (S − 1)/(S·v)) times 1F1B's.
  CHECK(in_flight_micro_batches(0, 4, 8, PS::interleaved, 2) == Approx(4 * (1 + 3.0 / 8)));
}

TEST_CASE("a parameter costs its value, its gradient and the optimizer state of its storage", "[costmodel][phases]") {
  const Graph g = build_zoo_model("mlp", {});
  const Tensor* w = nullptr;
  for (const Tensor& t : g.tensors) {
    if (t.role == TensorRole::parameter && t.shape.size() == 2) w = &t;
  }
  REQUIRE(w != nullptr);
  const double bytes = static_cast<double>(w->bytes());
  const double elems = bytes / dtype_bytes(w->dtype);
  const double bpp = optimizer_bytes_per_param(w->dtype);
  const NdSbp b = NdSbp::all(Sbp::broadcast(), 1), s0 = NdSbp::all(Sbp::split(0), 1);
  const ParamMemory rep = param_memory(*w, b, {8}, false, bpp);
  CHECK(rep.bytes == Approx(2 * bytes + elems * bpp));
  CHECK(rep.optimizer_params == Approx(elems));
  const ParamMemory zero1 = param_memory(*w, b, {8}, true, bpp);  // state split over the replicas
  CHECK(zero1.bytes == Approx(2 * bytes + elems * bpp / 8));
  CHECK(zero1.optimizer_params == Approx(elems / 8));
  const ParamMemory split = param_memory(*w, s0, {8}, true, bpp);  // stored split: nothing more to shard
  CHECK(split.bytes == Approx((2 * bytes + elems * bpp) / 8));
  CHECK(split.optimizer_params == Approx(elems / 8));
}

TEST_CASE("evaluate's peak memory is the memory phase's", "[costmodel][phases]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph g = build_zoo_model("gpt", {{"layers", "4"}, {"hidden", "256"}, {"heads", "8"}, {"seq", "128"},
                                          {"vocab", "1024"}, {"batch", "16"}});
  for (const char* spec : {"dp", "zero1", "zero3", "megatron:tp=4,pp=2,dp=2,mb=4,recompute=full"}) {
    const Scheme s = make_scheme(spec, g, c, {});
    const MemoryPhase m = stage_memory(g, s, make_eval_frame(g, c, s));
    const CostReport r = evaluate(g, c, s);
    INFO(spec);
    CHECK(r.peak_memory_bytes == m.peak_bytes);
    CHECK(r.param_memory_bytes == m.param_bytes);
    CHECK(r.activation_memory_bytes == m.activation_bytes);
    CHECK(m.peak_bytes >= m.param_bytes + m.activation_bytes);
    double params = 0;
    for (double x : m.optimizer_params) params += x;
    CHECK(params > 0);
  }
  // Over capacity is a result with its reason, not an error.
  ClusterSpec small = c;
  small.gpu.memory_bytes = 1e6;
  const CostReport r = evaluate(g, small, make_scheme("dp", g, small, {}));
  CHECK_FALSE(r.feasible);
  CHECK(r.infeasible_reason.rfind("peak memory ", 0) == 0);
}
