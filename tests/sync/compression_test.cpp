// fp16 compression is not free (issue 32): both evaluators charge its casts, the same way.
// Reference: the same variables with half the bytes, uncompressed (the "halved bytes" an
// all-reduce carries under compression). A compressed strategy must take that time plus the
// casts: 2 kernels over 1.5x the group's fp32 bytes each (read 4 + write 2, then read 2 +
// write 4 bytes per element), at hbm_bytes_per_s x hbm_efficiency plus one launch each.
#include "autoddl/sync/compression.hpp"

#include <catch2/catch.hpp>

#include "autoddl/costmodel/zoo.hpp"
#include "autoddl/sync/analytical.hpp"
#include "autoddl/sync/builders.hpp"
#ifdef AUTODDL_SYNC_HAVE_SIM
#include "autoddl/sync/simulated.hpp"
#endif
#include "tiny.hpp"

using namespace autoddl::sync;
using namespace autoddl::costmodel;

namespace {
constexpr double kDenseBytes = 9640;  // tiny_model(false)'s fp32 gradients (tiny.hpp)

// A slow HBM (1e8 B/s at 50%) and 2 us launches, so the casts are not lost in Approx's margin.
ClusterSpec slow_hbm_cluster(double hbm_bytes_per_s = 1e8) {
  ClusterSpec c = test::test_cluster(4, 1);
  c.gpu.hbm_bytes_per_s = hbm_bytes_per_s;
  c.gpu.hbm_efficiency = 0.5;
  c.gpu.launch_overhead_s = 2e-6;
  return c;
}

Strategy one_group(const std::vector<Variable>& vars, const ClusterSpec& c, Compressor comp) {
  Strategy s = find_builder("all_reduce").build(vars, c);
  for (VarConfig& v : s.vars) {
    v.parts[0].algorithm = ArAlgorithm::ring;
    v.parts[0].compressor = comp;
  }
  return s;
}

std::vector<Variable> halved(std::vector<Variable> vars) {
  for (Variable& v : vars) v.bytes /= 2;
  return vars;
}
}  // namespace

TEST_CASE("fp16 cast time: two memory-bound kernels over 1.5x the fp32 bytes each", "[sync][compression]") {
  GpuSpec gpu = slow_hbm_cluster().gpu;
  CHECK(fp16_cast_s(gpu, 0) == 0);
  CHECK(fp16_cast_s(gpu, 1e6) == Approx(2 * (1.5e6 / 0.5e8 + 2e-6)));
}

TEST_CASE("which strategies compress: fp16 on dense fp32 all-reduce only", "[sync][compression]") {
  Variable dense{.name = "w", .shape = {16}, .dtype = DType::fp32, .bytes = 64};
  Variable half{.name = "h", .shape = {16}, .dtype = DType::bf16, .bytes = 32};
  Synchronizer ar;
  ar.compressor = Compressor::fp16;
  Synchronizer ps = ar;
  ps.arch = Arch::ps;
  CHECK(compresses(ar, dense));
  CHECK_FALSE(compresses(ar, half));
  CHECK_FALSE(compresses(ps, dense));
  ClusterSpec c = test::test_cluster(4, 1);
  std::vector<Variable> vars = extract_variables(test::tiny_model(false));
  CHECK_FALSE(uses_compression(find_builder("horovod").build(vars, c), vars));
  CHECK_FALSE(uses_compression(find_builder("ddp").build(vars, c), vars));
  CHECK(uses_compression(find_builder("horovod-fp16").build(vars, c), vars));
  CHECK(uses_compression(find_builder("ddp-fp16").build(vars, c), vars));
  // fp16 on 16-bit gradients changes nothing: not lossy
  std::vector<Variable> bf16 = vars;
  for (Variable& v : bf16) v.dtype = DType::bf16;
  CHECK_FALSE(uses_compression(find_builder("ddp-fp16").build(bf16, c), bf16));
}

TEST_CASE("analytical: a compressed group takes the halved-bytes time plus its casts", "[sync][compression]") {
  Graph g = test::tiny_model(false);
  ClusterSpec c = slow_hbm_cluster();
  std::vector<Variable> vars = extract_variables(g);
  const Evaluation comp = evaluate_analytical(g, vars, one_group(vars, c, Compressor::fp16), c);
  const std::vector<Variable> half = halved(vars);
  const Evaluation ref = evaluate_analytical(g, half, one_group(half, c, Compressor::none), c);
  REQUIRE(comp.groups.size() == 1);
  REQUIRE(ref.groups.size() == 1);
  const double cast_s = 2 * (1.5 * kDenseBytes / 0.5e8 + 2e-6);  // 293 us
  CHECK(comp.groups[0].dense_bytes == Approx(kDenseBytes / 2));
  CHECK(comp.groups[0].compressed_fp32_bytes == Approx(kDenseBytes));
  CHECK(comp.groups[0].cast_s == Approx(cast_s));
  CHECK(ref.groups[0].cast_s == 0);
  CHECK(comp.groups[0].transmission_s == Approx(ref.groups[0].transmission_s));
  CHECK(comp.groups[0].time_s == Approx(ref.groups[0].time_s + cast_s));
  // One group, released when the last gradient is ready (end of backward): wholly exposed.
  CHECK(comp.iteration_s == Approx(ref.iteration_s + cast_s));
  CHECK(comp.iteration_s > ref.iteration_s);
}

#ifdef AUTODDL_SYNC_HAVE_SIM
TEST_CASE("simulated: a compressed group takes the halved-bytes time plus its casts", "[sync][compression]") {
  // MLP (16.8 MB of fp32 gradients); HBM 1e10 B/s at 50%: casts of 2 x 1.5 x 16.8 MB / 5e9 B/s
  // ~ 10 ms against a ring all-reduce of 8.4 MB over 1e9 B/s NICs ~ 12.6 ms.
  Graph g = build_zoo_model("mlp", {});
  ClusterSpec c = slow_hbm_cluster(1e10);
  std::vector<Variable> vars = extract_variables(g);
  const SimSyncOptions no_jitter{1, 0.0, 0.0};
  Strategy comp = one_group(vars, c, Compressor::fp16);
  const std::vector<Variable> half = halved(vars);
  const double sim_comp = simulate_strategy(g, vars, comp, c, no_jitter).iteration_s;
  const double sim_ref = simulate_strategy(g, half, one_group(half, c, Compressor::none), c, no_jitter).iteration_s;
  double fp32_bytes = 0;
  for (const Variable& v : vars) fp32_bytes += v.bytes;
  const double cast_s = fp16_cast_s(c.gpu, fp32_bytes);
  CHECK(cast_s == Approx(2 * (1.5 * fp32_bytes / 0.5e10 + 2e-6)));
  CHECK(sim_comp - sim_ref == Approx(cast_s).epsilon(0.01));
  // One fidelity: the analytical evaluator charges the same.
  const Evaluation ana = evaluate_analytical(g, vars, comp, c);
  CHECK(ana.groups[0].cast_s == Approx(cast_s));
  CHECK(sim_comp == Approx(ana.iteration_s).epsilon(0.03));
}
#endif
