// Compute slowed by the communication kernels that overlap it (sm_contention.hpp): userbuffers'
// SMs under tp_overlap, NCCL's one CTA per channel for the overlapped gradient sync and the
// overlapped pipeline sends. Each is compared with the same cluster without an SM count.
#include <catch2/catch.hpp>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/eval_frame.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/op_compute.hpp"
#include "autoddl/costmodel/sm_contention.hpp"
#include "autoddl/costmodel/zoo.hpp"

using namespace autoddl::costmodel;

namespace {
ClusterSpec h100(int nodes, int sm_count) {
  ClusterSpec c = resolve_cluster("dgx-h100", nodes);
  c.gpu.sm_count = sm_count;
  // sm_count also scales fused attention by its tiles per SM; off in both, so that only the SMs
  // communication takes differ between `with` and `without`.
  c.gpu.attention_reference_tiles = 0;
  return c;
}
const Graph& gpt3_layers() {
  static const Graph g =
      build_zoo_model("gpt", parse_knob_list("layers=4,hidden=12288,heads=96,seq=2048,batch=64,flash=1"));
  return g;
}
int op_index(const Graph& g, const std::string& name) {
  for (size_t i = 0; i < g.ops.size(); ++i) {
    if (g.ops[i].name == name) return static_cast<int>(i);
  }
  FAIL("no op " << name);
  return -1;
}
}  // namespace

TEST_CASE("a kernel on k of N SMs costs the compute beside it window x k / N", "[costmodel][sm_contention]") {
  CHECK(sm_contention_s(0.010, 16, 132) == Approx(0.010 * 16 / 132));
  CHECK(sm_contention_s(0.010, 16, 0) == 0);  // SM count unknown: not priced
  CHECK(sm_contention_s(0.010, 0, 132) == 0);
  CHECK(sm_contention_s(0.010, 200, 132) == Approx(0.010));  // never more than the window
  CHECK(resolve_cluster("dgx-h100", 1).gpu.sm_count == 132);
  CHECK(resolve_cluster("dgx-a100", 1).gpu.sm_count == 108);
}

TEST_CASE("userbuffers' GEMM roles follow a transformer layer: qkv, proj, fc1, fc2", "[costmodel][sm_contention]") {
  const Graph& g = gpt3_layers();
  const ClusterSpec c = h100(2, 132);
  const std::vector<TeGemm> roles = te_gemm_roles(g, make_scheme("megatron:tp=4,pp=1,dp=4,mb=1,sp=1", g, c, {}));
  for (const char* q : {"layer.2.attn.q", "layer.2.attn.k", "layer.2.attn.v"}) CHECK(roles[op_index(g, q)] == TeGemm::qkv);
  CHECK(roles[op_index(g, "layer.2.attn.proj")] == TeGemm::proj);
  CHECK(roles[op_index(g, "layer.2.ffn.fc1")] == TeGemm::fc1);
  CHECK(roles[op_index(g, "layer.2.ffn.fc2")] == TeGemm::fc2);
  CHECK(roles[op_index(g, "lm_head")] == TeGemm::none);              // outside a layer
  // Without tensor parallelism no GEMM is split, so none has a userbuffers role.
  for (TeGemm r : te_gemm_roles(g, make_scheme("megatron:tp=1,pp=1,dp=16,mb=1", g, c, {}))) CHECK(r == TeGemm::none);
}

TEST_CASE("tp_overlap runs proj and fc2 on the SMs userbuffers' reduce-scatter leaves", "[costmodel][sm_contention]") {
  const Graph& g = gpt3_layers();
  const ClusterSpec with = h100(2, 132), without = h100(2, 0);
  const Scheme s = make_scheme("megatron:tp=4,pp=1,dp=4,mb=1,sp=1,tp_overlap=1", g, with, {});
  const EvalFrame f = make_eval_frame(g, with, s);
  const std::vector<OpCompute> a = compute_phase(with.gpu, g, s, f.op_stage, nullptr);
  const std::vector<OpCompute> b = compute_phase(without.gpu, g, s, f.op_stage, nullptr);
  // proj: 24 SMs taken, set_sm_margin: the chunked GEMM runs on 108 of 132 SMs.
  const int proj = op_index(g, "layer.1.attn.proj"), fc2 = op_index(g, "layer.1.ffn.fc2");
  CHECK(a[proj].tp_chunk_fwd_extra_s - b[proj].tp_chunk_fwd_extra_s ==
        Approx((b[proj].fwd_s + b[proj].tp_chunk_fwd_extra_s) * 24 / 108));
  CHECK(a[fc2].tp_chunk_fwd_extra_s - b[fc2].tp_chunk_fwd_extra_s ==
        Approx((b[fc2].fwd_s + b[fc2].tp_chunk_fwd_extra_s) * 20 / 112));
  // Their backward data GEMMs overlap a ring exchange on the copy engines: every SM.
  CHECK(a[proj].tp_chunk_bwd_extra_s == Approx(b[proj].tp_chunk_bwd_extra_s));
  // The column-parallel GEMMs' bulk reduce-scatter shares the SMs with their weight gradient.
  CHECK(a[op_index(g, "layer.1.attn.q")].tp_bwd_sm_share == Approx(8.0 / 132));
  CHECK(a[op_index(g, "layer.1.ffn.fc1")].tp_bwd_sm_share == Approx(4.0 / 132));
  CHECK(b[op_index(g, "layer.1.ffn.fc1")].tp_bwd_sm_share == 0);
  // The whole step is slower by at least the forward margins of every layer.
  double margins = 0;
  for (size_t i = 0; i < g.ops.size(); ++i) margins += a[i].tp_chunk_fwd_extra_s - b[i].tp_chunk_fwd_extra_s;
  REQUIRE(margins > 0);
  const CostReport ra = evaluate(g, with, s), rb = evaluate(g, without, s);
  CHECK(ra.iteration_s - rb.iteration_s >= f.micro_batches * margins * (1 - 1e-9));
}

TEST_CASE("NCCL's channels slow the backward the gradient sync overlaps", "[costmodel][sm_contention]") {
  const Graph& g = gpt3_layers();
  // dp inside one node: the sync hides under the backward, which it slows.
  const ClusterSpec with = h100(1, 132), without = h100(1, 0);
  const Scheme s = make_scheme("megatron:tp=4,pp=1,dp=2,mb=1,sp=1", g, with, {});
  const CostReport ra = evaluate(g, with, s), rb = evaluate(g, without, s);
  REQUIRE(rb.grad_sync_exposed_s < 0.1 * rb.grad_sync_s);
  REQUIRE(rb.grad_sync_s > 0);
  const double slower = ra.iteration_s - rb.iteration_s;
  CHECK(slower > 0);
  // At most the sync times NCCL's most channels (32) over 132 SMs, all of it charged as compute.
  CHECK(slower <= rb.grad_sync_s * 32 / 132);
  CHECK(ra.compute_s - rb.compute_s == Approx(slower + rb.grad_sync_exposed_s - ra.grad_sync_exposed_s));
  // dp across nodes: the sync runs past the backward; slowing the backward under it only moves
  // time from exposed sync to compute, and the step takes as long.
  const ClusterSpec with2 = h100(2, 132), without2 = h100(2, 0);
  const Scheme s2 = make_scheme("megatron:tp=8,pp=1,dp=2,mb=1,sp=1", g, with2, {});
  const CostReport a2 = evaluate(g, with2, s2), b2 = evaluate(g, without2, s2);
  REQUIRE(b2.grad_sync_exposed_s > 0);
  CHECK(a2.iteration_s == Approx(b2.iteration_s));
  CHECK(a2.grad_sync_exposed_s < b2.grad_sync_exposed_s);
}

TEST_CASE("NCCL's send/recv channels slow the compute pp_overlap hides them under", "[costmodel][sm_contention]") {
  // DGX H100: one 400 Gb/s NIC (50 GB/s) per GPU, 14 GB/s per channel: 4 channels, a power of 2.
  CHECK(nccl_p2p_net_channels(resolve_cluster("dgx-h100", 2)) == 4);
  // DGX A100: one 200 Gb/s NIC (25 GB/s) per GPU: 2 channels.
  CHECK(nccl_p2p_net_channels(resolve_cluster("dgx-a100", 2)) == 2);
  const Graph& g = gpt3_layers();
  const ClusterSpec with = h100(4, 132), without = h100(4, 0);
  // pp over 4 nodes (one stage per node): every stage boundary crosses nodes.
  const Scheme s = make_scheme("megatron:tp=8,pp=4,dp=1,mb=1,interleave=1,pp_overlap=0", g, with, {});
  const Scheme o = make_scheme("megatron:tp=8,pp=2,dp=2,mb=1,interleave=2,pp_overlap=1", g, with, {});
  CHECK(make_eval_frame(g, with, o).p2p_sms == 4);
  CHECK(make_eval_frame(g, without, o).sm_count == 0);
  const CostReport ra = evaluate(g, with, o), rb = evaluate(g, without, o);
  CHECK(ra.compute_s > rb.compute_s);
  // Without pp_overlap the sends stay exposed, so no SMs are charged for them.
  const CostReport sa = evaluate(g, with, s), sb = evaluate(g, without, s);
  CHECK(sa.send_recv_s == Approx(sb.send_recv_s));
  CHECK(sa.compute_s - sb.compute_s == Approx(sa.iteration_s - sb.iteration_s - (sa.grad_sync_exposed_s - sb.grad_sync_exposed_s)));
}
