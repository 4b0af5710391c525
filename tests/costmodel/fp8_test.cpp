// dtype=fp8 (Transformer Engine's recipe on Hopper): the layers' linear GEMMs run at the FP8
// tensor-core peak plus the cast of their activation operand (forward, once per tensor) and
// output gradient (backward); the output layer and the attention core stay bf16; every tensor,
// and so communication, stays bf16; a GPU without FP8 refuses it.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "autoddl/costmodel/compute.hpp"
#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/zoo.hpp"
#include "input_error.hpp"

using namespace autoddl::costmodel;

namespace {
const std::map<std::string, std::string> kGpt = {{"layers", "4"}, {"hidden", "4096"}, {"heads", "32"},
                                                 {"seq", "2048"}, {"batch", "16"}, {"flash", "1"}};
std::map<std::string, std::string> with_dtype(const char* d) {
  auto k = kGpt;
  k["dtype"] = d;
  return k;
}
}  // namespace

TEST_CASE("fp8 prices the layers' linear GEMMs at the FP8 peak plus one cast per input tensor", "[costmodel][fp8]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 1);
  REQUIRE(c.gpu.peak_flops_fp8 == Approx(2 * c.gpu.peak_flops_bf16).epsilon(0.01));
  for (const char* flash : {"1", "0"}) {
    INFO("flash=" << flash);
    auto knobs = with_dtype("bf16");
    knobs["flash"] = flash;
    const Graph bf = build_zoo_model("gpt", knobs);
    knobs["dtype"] = "fp8";
    const Graph f8 = build_zoo_model("gpt", knobs);
    CHECK_FALSE(bf.fp8_gemms);
    CHECK(f8.fp8_gemms);
    REQUIRE(bf.ops.size() == f8.ops.size());
    const double hbm = c.gpu.hbm_bytes_per_s * c.gpu.hbm_efficiency;
    int fp8_gemms = 0, casts = 0;
    for (size_t i = 0; i < bf.ops.size(); ++i) {
      const Op& op = f8.ops[i];
      INFO(op.name);
      CHECK(f8.tensors[op.outputs[0]].dtype == bf.tensors[bf.ops[i].outputs[0]].dtype);  // tensors stay bf16
      const OpTimes a = op_kernel_times(c.gpu, bf, bf.ops[i], 1.0), b = op_kernel_times(c.gpu, f8, op, 1.0);
      // The output layer and the attention core's products stay bf16, as Megatron-LM runs them.
      const bool te_linear = op.kind == OpKind::matmul && op.name.rfind("layer.", 0) == 0 && !op.attention_core;
      CHECK(runs_fp8_gemm(f8, op) == te_linear);
      if (!te_linear) {
        CHECK(b.fwd_s == a.fwd_s);
        CHECK(b.bwd_s == a.bwd_s);
        continue;
      }
      ++fp8_gemms;
      const double gemm = kernel_time_s(c.gpu, op.kind, DType::fp8, op.work.fwd_flops, op.work.fwd_bytes, 1);
      const double cast = 1.5 * static_cast<double>(f8.tensors[op.inputs[0]].bytes()) / hbm + c.gpu.launch_overhead_s;
      // Q, K and V read one LayerNorm output: one cast, paid by the first of them.
      const bool shares_input = op.name.find("attn.k") != std::string::npos || op.name.find("attn.v") != std::string::npos;
      CHECK(b.fwd_s == Approx(gemm + (shares_input ? 0 : cast)).epsilon(1e-12));
      casts += shares_input ? 0 : 1;
      CHECK(b.bwd_s < a.bwd_s);
    }
    CHECK(fp8_gemms == 4 * 6);  // q, k, v, proj, fc1, fc2 in each of 4 layers
    CHECK(casts == 4 * 4);
    CHECK_FALSE(runs_fp8_gemm(f8, f8.ops[f8.find_op("lm_head")]));
    const CostReport rb = evaluate(bf, c, make_scheme("megatron:tp=8,pp=1,dp=1,sp=1", bf, c, {}));
    const CostReport r8 = evaluate(f8, c, make_scheme("megatron:tp=8,pp=1,dp=1,sp=1", f8, c, {}));
    CHECK(r8.param_memory_bytes == rb.param_memory_bytes);
    // sp's backward re-gathers hide under the data-gradient GEMMs, which FP8 makes shorter.
    CHECK(r8.comm_exposed_s >= rb.comm_exposed_s);
    CHECK(r8.comm_exposed_s < 1.2 * rb.comm_exposed_s);
    CHECK(r8.compute_s < 0.85 * rb.compute_s);  // the GEMMs dominate a 4096-wide layer
    CHECK(r8.model_flops_per_iteration == rb.model_flops_per_iteration);
  }
}

TEST_CASE("fp8 on a GPU without FP8 tensor cores is an input error naming the dtype knob", "[costmodel][fp8]") {
  const ClusterSpec a100 = resolve_cluster("dgx-a100", 1);
  REQUIRE(a100.gpu.peak_flops_fp8 == 0);
  const Graph g = build_zoo_model("gpt", with_dtype("fp8"));
  auto e = input_error_of([&] { evaluate(g, a100, make_scheme("dp", g, a100, {})); });
  REQUIRE(e);
  CHECK(e->file() == "--set");
  CHECK(e->field() == "dtype");
  // The cluster JSON keeps the FP8 peak and its source through a round trip.
  const ClusterSpec h100 = resolve_cluster("dgx-h100", 1);
  CHECK(cluster_from_json(cluster_to_json(h100), "round trip") == h100);
}
