// Memory-bound kernels that do not stream (issue 28 item 8): norms, the vocabulary loss and the
// Adam step move their bytes at the GPU's measured fraction of the streaming rate
// (GpuSpec::norm_fwd_rate ...); every other non-GEMM kernel streams; a preset without the
// measurements keeps the roofline.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "autoddl/costmodel/compute.hpp"
#include "autoddl/costmodel/op_registry.hpp"
#include "autoddl/costmodel/zoo.hpp"

using namespace autoddl::costmodel;

namespace {
const std::map<std::string, std::string> kLlama = {{"size", "2-7b"}, {"layers", "2"}, {"seq", "4096"}, {"batch", "1"}};

// The roofline the op would get streaming: its bytes at hbm x hbm_efficiency, plus launches.
double streaming_s(const GpuSpec& gpu, double bytes, int kernels) {
  return bytes / (gpu.hbm_bytes_per_s * gpu.hbm_efficiency) + kernels * gpu.launch_overhead_s;
}
}  // namespace

TEST_CASE("norms and the loss move their bytes at the GPU's measured rates and other kernels stream", "[costmodel][compute]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 1);
  REQUIRE(c.gpu.norm_fwd_rate > 0);
  REQUIRE(c.gpu.norm_fwd_rate < 1);
  REQUIRE(c.gpu.loss_bwd_rate < 1);
  const Graph g = build_zoo_model("llama", kLlama);
  int norms = 0, losses = 0, streaming = 0;
  for (const Op& op : g.ops) {
    if (op_kind_info(op.kind).gemm || op.kind == OpKind::attention || op.work.fwd_bytes <= 0) continue;
    INFO(op.name);
    const OpTimes t = op_kernel_times(c.gpu, g, op, 1.0);
    double fwd_rate = 1, bwd_rate = 1;
    if (op.kind == OpKind::layer_norm) {
      fwd_rate = c.gpu.norm_fwd_rate, bwd_rate = c.gpu.norm_bwd_rate, ++norms;
    } else if (op.kind == OpKind::cross_entropy) {
      fwd_rate = c.gpu.loss_fwd_rate, bwd_rate = c.gpu.loss_bwd_rate, ++losses;
    } else {
      ++streaming;
    }
    CHECK(t.fwd_s == Approx(streaming_s(c.gpu, op.work.fwd_bytes / fwd_rate, 1)));
    if (op.work.bwd_bytes > 0) CHECK(t.bwd_s == Approx(streaming_s(c.gpu, op.work.bwd_bytes / bwd_rate, 2)));
  }
  CHECK(norms == 5);  // two per layer and the final RMSNorm
  CHECK(losses == 1);
  CHECK(streaming > 10);  // residual adds, SwiGLU, the head reshapes, the embedding lookup
}

TEST_CASE("a GPU without measured rates prices norms and the loss at the streaming rate", "[costmodel][compute]") {
  ClusterSpec c = resolve_cluster("dgx-a100", 1);
  CHECK(c.gpu.norm_fwd_rate == 0);
  const Graph g = build_zoo_model("llama", kLlama);
  for (const Op& op : g.ops) {
    if (op.kind != OpKind::layer_norm && op.kind != OpKind::cross_entropy) continue;
    INFO(op.name);
    CHECK(memory_rate(c.gpu, op.kind, false) == 1);
    CHECK(op_kernel_times(c.gpu, g, op, 1.0).fwd_s == Approx(streaming_s(c.gpu, op.work.fwd_bytes, 1)));
  }
  // Given the H100's rates, the same GPU prices the norm and loss kernels slower by exactly them.
  const ClusterSpec h = resolve_cluster("dgx-h100", 1);
  for (const Op& op : g.ops) {
    if (op.kind != OpKind::layer_norm && op.kind != OpKind::cross_entropy) continue;
    const double before = op_kernel_times(c.gpu, g, op, 1.0).bwd_s - 2 * c.gpu.launch_overhead_s;
    c.gpu.norm_bwd_rate = h.gpu.norm_bwd_rate;
    c.gpu.loss_bwd_rate = h.gpu.loss_bwd_rate;
    const double after = op_kernel_times(c.gpu, g, op, 1.0).bwd_s - 2 * c.gpu.launch_overhead_s;
    c.gpu.norm_bwd_rate = c.gpu.loss_bwd_rate = 0;
    CHECK(after == Approx(before / memory_rate(h.gpu, op.kind, true)));
  }
}

TEST_CASE("the Adam step runs at the GPU's measured optimizer rate", "[costmodel][compute]") {
  ClusterSpec c = resolve_cluster("dgx-h100", 1);
  REQUIRE(c.gpu.optimizer_rate > 0);
  const double n = 1e9;
  const double measured = optimizer_step_s(c.gpu, n, DType::bf16);
  CHECK(measured == Approx(optimizer_step_bytes(n, DType::bf16) /
                               (c.gpu.hbm_bytes_per_s * c.gpu.hbm_efficiency * c.gpu.optimizer_rate) +
                           c.gpu.launch_overhead_s));
  c.gpu.optimizer_rate = 0;
  CHECK(optimizer_step_s(c.gpu, n, DType::bf16) < measured);
}
