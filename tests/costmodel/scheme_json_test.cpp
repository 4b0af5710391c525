// Pins the scheme JSON contract: every expert scheme written out and read back re-costs to the
// same report, and bad files name the field and reason. Also the one-weird-trick lowering and
// the CostReport JSON fields the CLI promises.
#include <catch2/catch.hpp>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/scheme_json.hpp"
#include "autoddl/costmodel/zoo.hpp"

using namespace autoddl::costmodel;
using autoddl::InputError;

namespace {

Graph small_gpt() {
  return build_zoo_model("gpt", {{"layers", "4"}, {"hidden", "256"}, {"heads", "8"}, {"seq", "128"},
                                 {"vocab", "1024"}, {"batch", "16"}});
}

std::string error_of(const nlohmann::json& j, const Graph& g, const ClusterSpec& c) {
  try {
    scheme_from_json(j, g, c, "s.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("every expert scheme round-trips through scheme JSON and re-costs to the same time",
          "[costmodel][scheme]") {
  ClusterSpec c = resolve_cluster("dgx-a100", 1);
  Graph g = small_gpt();
  for (const char* spec : {"dp", "zero1", "zero3", "megatron:tp=8,pp=1,dp=1", "megatron:tp=4,pp=1,dp=2,sp=1",
                           "megatron:tp=2,pp=2,dp=2,mb=2,recompute=selective",
                           "megatron:tp=1,pp=2,dp=4,mb=1,interleave=2"}) {
    INFO(spec);
    Scheme s = make_scheme(spec, g, c, {});
    Scheme back = scheme_from_json(nlohmann::json::parse(scheme_to_json(s, g).dump()), g, c, "s.json");
    CostReport a = evaluate(g, c, s), b = evaluate(g, c, back);
    CHECK(b.iteration_s == Approx(a.iteration_s).epsilon(1e-12));
    CHECK(b.peak_memory_bytes == Approx(a.peak_memory_bytes).epsilon(1e-12));
    CHECK(b.comm.total_s() == Approx(a.comm.total_s()).epsilon(1e-12));
  }
}

TEST_CASE("a bad scheme file names the field and the reason", "[costmodel][scheme]") {
  ClusterSpec c = resolve_cluster("dgx-a100", 1);
  Graph g = small_gpt();
  nlohmann::json good = scheme_to_json(make_scheme("dp", g, c, {8}), g);
  {
    nlohmann::json j = good;
    j["ops"][0]["op"] = "no_such_op";
    CHECK_THAT(error_of(j, g, c), Catch::Contains("s.json: ops[0].op: unknown op 'no_such_op'"));
  }
  {
    nlohmann::json j = good;
    j["ops"].erase(j["ops"].begin() + 3);
    CHECK_THAT(error_of(j, g, c), Catch::Contains("ops: no signature for op"));
  }
  {
    nlohmann::json j = good;
    j["ops"][0]["in"][0] = "S(7)";  // the op has no axis 7
    CHECK_THAT(error_of(j, g, c), Catch::Contains("ops[0]: not a legal signature"));
  }
  {
    nlohmann::json j = good;
    j["ops"][0]["in"][0] = "(S(0),B)";  // 2-D SBP on a 1-D mesh
    CHECK_THAT(error_of(j, g, c), Catch::Contains("ops[0].in[0]: must be an nd-SBP string with 1 entries"));
  }
  {
    nlohmann::json j = good;
    j["mesh"] = {64};
    CHECK_THAT(error_of(j, g, c), Catch::Contains("mesh: mesh has 64 devices"));
  }
  {
    nlohmann::json j = good;
    j["speed"] = "fast";
    CHECK_THAT(error_of(j, g, c), Catch::Contains("speed: unknown key"));
  }
  {
    nlohmann::json j = good;
    j["micro_batches"] = 5;
    CHECK_THAT(error_of(j, g, c), Catch::Contains("micro_batches: does not divide the batch 16"));
  }
  CHECK(error_of(good, g, c).empty());
}

TEST_CASE("one weird trick runs convolutions data-parallel and the classifier model-parallel",
          "[costmodel][scheme][owt]") {
  ClusterSpec c = resolve_cluster("dgx-a100", 1);
  Graph g = build_zoo_model("vgg16", {{"batch", "64"}});
  Scheme s = make_scheme("owt", g, c, {8});
  int convs = 0, fcs = 0;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    const OpSignature& sig = s.op_sigs[i];
    if (op.kind == OpKind::conv2d) {
      ++convs;
      CHECK(sig.in[0] == NdSbp::all(Sbp::split(0), 1));  // batch split
      CHECK(sig.in[1] == NdSbp::all(Sbp::broadcast(), 1));  // weights replicated
    }
    if (op.kind == OpKind::matmul) {
      ++fcs;
      CHECK(sig.in[1].dims[0].is_split());  // FC weights split across the GPUs
    }
  }
  CHECK(convs == 13);
  CHECK(fcs == 3);
  CostReport owt = evaluate(g, c, s), dp = evaluate(g, c, make_scheme("dp", g, c, {8}));
  // The FC layers hold ~90% of VGG16's weights: splitting them cuts the gradient traffic.
  double owt_bytes = 0, dp_bytes = 0;
  for (double b : owt.comm.bytes) owt_bytes += b;
  for (double b : dp.comm.bytes) dp_bytes += b;
  CHECK(owt_bytes < 0.5 * dp_bytes);
}

TEST_CASE("the CostReport JSON carries every field the CLI documents", "[costmodel][scheme]") {
  ClusterSpec c = resolve_cluster("dgx-a100", 2);
  Graph g = small_gpt();
  nlohmann::json j = to_json(evaluate(g, c, make_scheme("megatron:tp=8,pp=1,dp=2", g, c, {})));
  for (const char* f : {"iteration_s", "compute_s", "comm_exposed_s", "bubble_s", "comm_s_by_kind", "bytes_by_kind",
                        "count_by_kind", "peak_memory_bytes", "memory_capacity_bytes", "feasible",
                        "infeasible_reason", "params", "model_flops_per_iteration", "samples_per_s",
                        "model_tflops_per_gpu", "per_op"}) {
    CHECK(j.contains(f));
  }
  for (const char* k : {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv"}) {
    CHECK(j["count_by_kind"].contains(k));
  }
  REQUIRE(j["per_op"].size() == g.ops.size());
  for (const char* f : {"op", "signature", "compute_s", "boxing_s"}) CHECK(j["per_op"][0].contains(f));
}
