// A validation plan rank's GPU memory: the runner's buffers, sized to the largest step of each
// kind, plus what NCCL allocates during the run (issue 16, defect 9): collective buffers when
// they are connected lazily, point-to-point buffers always. A plan that fits only without NCCL's
// share is skipped with a reason that names it.
#include <catch2/catch.hpp>

#include "autoddl/calib/validation_memory.hpp"

using namespace autoddl::calib;

namespace {

constexpr size_t MiB = size_t(1) << 20;

PlanStep step(StepKind kind, const std::string& dtype, double bytes) {
  PlanStep s;
  s.kind = kind;
  s.dtype = dtype;
  s.bytes = bytes;
  return s;
}

// Two ranks: a GEMM, a memory step, an all-reduce over both, and a pipeline send to the other.
ValidationPlan two_ranks() {
  ValidationPlan p;
  p.mesh_shape = {2};
  p.groups = {{0, {0, 1}}};
  for (int r = 0; r < 2; ++r) {
    RankProgram rp;
    rp.rank = r;
    PlanStep g = step(StepKind::gemm, "bf16", 0);
    g.m = 1024, g.n = 2048, g.k = 512;
    rp.steps.push_back(g);
    PlanStep m = step(StepKind::memory, "bf16", 64 * MiB);
    m.kernels = 2;
    rp.steps.push_back(m);
    PlanStep c = step(StepKind::collective, "fp32", 256 * MiB);
    c.collective = "all_reduce", c.group = 0;
    rp.steps.push_back(c);
    PlanStep s = step(r == 0 ? StepKind::send : StepKind::recv, "bf16", 8 * MiB);
    s.group = 0, s.peer = 1 - r;
    rp.steps.push_back(s);
    p.ranks.push_back(rp);
  }
  return p;
}

}  // namespace

TEST_CASE("a rank's buffers are its largest step of each kind, and it counts its communicators and p2p peers",
          "[calib][validation]") {
  const RankBuffers b = rank_buffers(two_ranks(), 0);
  CHECK(b.a == 2 * 1024 * 512);
  CHECK(b.b == 2 * 512 * 2048);
  CHECK(b.c == 2 * 1024 * 2048);
  CHECK(b.half == 16 * MiB);  // 64 MiB read + written over 2 kernels
  CHECK(b.send == 256 * MiB);
  CHECK(b.recv == 256 * MiB);
  CHECK(b.gemm_dtype == "bf16");
  CHECK(b.comm_dtype == "fp32");
  CHECK(b.communicators == 1);
  CHECK(b.p2p_peers == 1);
  CHECK(b.runner_bytes() == b.a + b.b + b.c + 2 * b.half + b.send + b.recv + kRunnerWorkspaceBytes);
}

TEST_CASE("NCCL's lazily allocated buffers count in the memory check", "[calib][validation]") {
  const RankBuffers b = rank_buffers(two_ranks(), 1);
  CHECK(b.nccl_lazy_bytes(true) == kNcclP2pBytesPerPeer);  // p2p stays lazy even when connected at init
  CHECK(b.nccl_lazy_bytes(false) == kNcclLazyCollectiveBytesPerComm + kNcclP2pBytesPerPeer);
  // Room for the buffers and the headroom, but not for NCCL's collective buffers on top.
  const size_t free_bytes = b.runner_bytes() + kRunnerHeadroomBytes + kNcclP2pBytesPerPeer + 64 * MiB;
  CHECK(memory_shortfall(b, free_bytes, true, 1).empty());
  const std::string why = memory_shortfall(b, free_bytes, false, 1);
  REQUIRE_FALSE(why.empty());
  CHECK_THAT(why, Catch::StartsWith("rank 1 needs 0.61 GB of buffers and about 0.57 GB that NCCL allocates"));
}
