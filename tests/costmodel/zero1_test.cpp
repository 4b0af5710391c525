// ZeRO-1 (and the distributed optimizer's sharding): gradients are reduce-scattered into the
// shard each data-parallel replica updates, Adam steps only that shard, and the updated shards
// are all-gathered back. Against plain data parallelism it moves the same bytes and saves the
// optimizer step over the other replicas' shards.
#include <catch2/catch.hpp>

#include <algorithm>

#include "autoddl/costmodel/compute.hpp"
#include "autoddl/costmodel/boxing_plan.hpp"
#include "autoddl/costmodel/grad_buckets.hpp"
#include "autoddl/costmodel/op_compute.hpp"
#include "autoddl/costmodel/timeline.hpp"
#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/zoo.hpp"
#include "phases/run_phases.hpp"

using namespace autoddl::costmodel;

TEST_CASE("zero1 steps the optimizer on its shard, reduce-scatters and all-gathers", "[costmodel][zero]") {
  // No SM count: the syncs' NCCL kernels would also slow the backward they overlap, by different
  // amounts for an all-reduce and a reduce-scatter (sm_contention_test.cpp).
  ClusterSpec c = resolve_cluster("dgx-a100", 4);
  c.gpu.sm_count = 0;
  const Graph g = build_zoo_model("gpt", parse_knob_list("layers=24,hidden=2048,heads=16,seq=1024,batch=32"));
  const CostReport dp = evaluate(g, c, make_scheme("dp", g, c, {}));
  const CostReport z1 = evaluate(g, c, make_scheme("zero1", g, c, {}));
  const double n = static_cast<double>(g.parameter_count());
  const double devices = 32;
  const DType dt = g.tensors[g.ops[g.find_op("layer.0.attn.q")].inputs[1]].dtype;
  const double step_saved = optimizer_step_s(c.gpu, n, dt) - optimizer_step_s(c.gpu, n / devices, dt);
  REQUIRE(step_saved > 0.01);  // 1.3 G parameters: tens of milliseconds
  // The compute difference is the optimizer step over the other 31/32 of the parameters (a few
  // parameters whose first axis does not divide 32 keep their whole step: within 2%).
  CHECK(dp.compute_s - z1.compute_s == Approx(step_saved).epsilon(0.02));
  CHECK(z1.iteration_s < dp.iteration_s);
  // The same bytes on the wire: reduce-scatter + all-gather instead of all-reduce.
  double dp_bytes = 0, z1_bytes = 0;
  for (double b : dp.comm.bytes) dp_bytes += b;
  for (double b : z1.comm.bytes) z1_bytes += b;
  CHECK(z1_bytes == Approx(dp_bytes).epsilon(0.01));
  const auto rs = static_cast<size_t>(CollectiveKind::reduce_scatter);
  const auto ag = static_cast<size_t>(CollectiveKind::all_gather);
  CHECK(z1.comm.count[rs] > 0);
  CHECK(z1.comm.count[ag] > 0);
}

TEST_CASE("megatron dist_opt=1 shards Adam's state over dp and leaves tp and pp alone", "[costmodel][zero]") {
  // Megatron-LM's distributed optimizer (fp16 model): 2 B weight + 4 B fp32 main gradient per
  // local parameter, and the 12 B of fp32 master weight and moments divided by the dp size.
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph g = build_zoo_model("gpt", parse_knob_list("layers=4,hidden=1024,heads=16,seq=512,batch=32,dtype=fp16"));
  const CostReport plain = evaluate(g, c, make_scheme("megatron:tp=4,pp=1,dp=4,mb=1", g, c, {}));
  const CostReport dist = evaluate(g, c, make_scheme("megatron:tp=4,pp=1,dp=4,mb=1,dist_opt=1", g, c, {}));
  // Per device: the plain run holds 18 B per local parameter; the local parameters follow.
  const double local_params = plain.param_memory_bytes / 18;
  CHECK(dist.param_memory_bytes == Approx(local_params * (6 + 12.0 / 4)).epsilon(0.01));
  CHECK(dist.compute_s < plain.compute_s);  // Adam steps a quarter of the parameters
  const auto rs = static_cast<size_t>(CollectiveKind::reduce_scatter);
  CHECK(dist.comm.count[rs] > plain.comm.count[rs]);
}

TEST_CASE("dist_opt overlaps its parameter all-gather with the next forward unless param_overlap=0", "[costmodel][zero]") {
  // Megatron-LM's --overlap-param-gather, on in the recipes with the distributed optimizer: the
  // shard all-gather runs bucket by bucket under the next iteration's forward, so only the first
  // bucket and what outlasts one micro-batch's forward stay exposed.
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph g = build_zoo_model("gpt", parse_knob_list("layers=8,hidden=2048,heads=16,seq=512,batch=64,dtype=bf16"));
  const Scheme hidden = make_scheme("megatron:tp=2,pp=1,dp=8,mb=1,dist_opt=1", g, c, {});
  const Scheme after = make_scheme("megatron:tp=2,pp=1,dp=8,mb=1,dist_opt=1,param_overlap=0", g, c, {});
  CHECK(hidden.overlap_param_gather);
  CHECK_FALSE(after.overlap_param_gather);
  const CostReport rh = evaluate(g, c, hidden), ra = evaluate(g, c, after);
  // The gather's buckets and one micro-batch's forward, from the phases evaluate() runs.
  const RunPhases p(g, c, after);
  const GradSyncPhase& sync = p.sync;
  const StageTimes st = stage_times(p.frame, p.compute, p.boxing);
  REQUIRE(sync.param_gather_s[0] > 0);
  REQUIRE(sync.param_gather_first_s[0] > 0);
  const double exposed = std::max(sync.param_gather_first_s[0], sync.param_gather_s[0] - st.fwd_s[0]);
  CHECK(ra.iteration_s - rh.iteration_s == Approx(sync.param_gather_s[0] - exposed).epsilon(1e-6));
  CHECK(rh.iteration_s < ra.iteration_s);
  // Without the distributed optimizer there is no shard gather to overlap.
  CHECK_THROWS_AS(make_scheme("megatron:tp=2,pp=1,dp=8,param_overlap=1", g, c, {}), autoddl::InputError);
}
