// Compute and communication streams: a collective on the comm stream runs while the compute
// stream computes, unless a dependency orders them; DDP-style gradient buckets hide all but the
// last bucket's all-reduce. Compute runs at the GPU's peak rate for the dtype.
#include <catch2/catch.hpp>
#include "alpha_beta_cluster.hpp"

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/collective.hpp"
#include "autoddl/sim/simulate.hpp"

using namespace autoddl;
using costmodel::CollectiveKind;

namespace {
const costmodel::ClusterSpec& a100() {
  static const auto c = autoddl::sim_test::alpha_beta_cluster("dgx-a100", 1);
  return c;
}
double all_reduce_s(double bytes) {
  return costmodel::collective_algo_time_s(a100(), CollectiveKind::all_reduce, costmodel::CollectiveAlgo::ring,
                                           costmodel::contiguous_group(a100(), 2), bytes);
}
constexpr double kCompute_s = 10e-3;
constexpr double kBytes = 1.2e9;  // about 5 ms on 2 A100s
}  // namespace

TEST_CASE("compute runs at the GPU's peak FLOP/s for the simulated dtype", "[sim][executor]") {
  sim::Program p(1);
  p.compute(0, a100().gpu.peak_flops_fp16 * kCompute_s);
  p.compute_seconds(0, 2e-3);
  CHECK(sim::simulate(p, a100()).iteration_s == Approx(kCompute_s + 2e-3).epsilon(1e-9));
  sim::SimOptions fp32;
  fp32.dtype = costmodel::DType::fp32;
  CHECK(sim::simulate(p, a100(), fp32).iteration_s ==
        Approx(kCompute_s * a100().gpu.peak_flops_fp16 / a100().gpu.peak_flops_fp32 + 2e-3).epsilon(1e-9));
}

TEST_CASE("a collective on the comm stream overlaps compute unless a dependency orders them", "[sim][executor]") {
  const double ar = all_reduce_s(kBytes);
  REQUIRE(ar < kCompute_s);
  for (bool ordered : {false, true}) {
    sim::Program p(2);
    sim::TaskId c0 = p.compute_seconds(0, kCompute_s);
    sim::TaskId c1 = p.compute_seconds(1, kCompute_s);
    sim::TaskOptions o;
    if (ordered) o.deps = {c0, c1};
    p.collective(CollectiveKind::all_reduce, {0, 1}, kBytes, costmodel::CollectiveAlgo::ring, o);
    const sim::SimResult r = sim::simulate(p, a100());
    INFO((ordered ? "ordered" : "independent"));
    CHECK(r.iteration_s == Approx(ordered ? kCompute_s + ar : kCompute_s).epsilon(1e-6));
    CHECK(r.comm_s == Approx(ar).epsilon(1e-6));
    CHECK(r.exposed_comm_s == Approx(ordered ? ar : 0).margin(1e-9));
    CHECK(r.devices[0].idle_s == Approx(0).margin(1e-9));
    CHECK(r.streams.size() == 4);
  }
}

TEST_CASE("gradient buckets overlap backward compute and expose only the last bucket's all-reduce",
          "[sim][executor]") {
  constexpr int kBuckets = 4;
  sim::Program p(2);
  for (int b = 0; b < kBuckets; ++b) {
    sim::TaskId c0 = p.compute_seconds(0, kCompute_s / kBuckets, {.phase = sim::Phase::backward});
    sim::TaskId c1 = p.compute_seconds(1, kCompute_s / kBuckets, {.phase = sim::Phase::backward});
    p.collective(CollectiveKind::all_reduce, {0, 1}, kBytes / kBuckets, costmodel::CollectiveAlgo::ring,
                 {.deps = {c0, c1}, .phase = sim::Phase::grad_sync});
  }
  const sim::SimResult r = sim::simulate(p, a100());
  const double bucket_ar = all_reduce_s(kBytes / kBuckets);
  REQUIRE(bucket_ar < kCompute_s / kBuckets);
  CHECK(r.iteration_s == Approx(kCompute_s + bucket_ar).epsilon(1e-6));
  CHECK(r.exposed_comm_s == Approx(bucket_ar).epsilon(1e-6));
}
