// Pins the collective α-β formulas of costmodel/cluster/src/collective.cpp against numbers worked out by
// hand on a toy cluster with round constants, nccl-tests' busbw factors (doc/PERFORMANCE.md),
// and the NCCL-like algorithm choice (ring for large messages, tree/hierarchical for small ones
// across nodes) on the dgx-a100 preset.
#include <catch2/catch.hpp>

#include <cmath>

#include "autoddl/costmodel/collective.hpp"
#include "autoddl/costmodel/error.hpp"

using namespace autoddl::costmodel;
using K = CollectiveKind;
using A = CollectiveAlgo;

namespace {

// Toy cluster: intra 100 GB/s × 0.5 = 50 GB/s (β_i = 2e-11 s/B), α_i = 1 µs;
// 2 NICs × 12.5 GB/s × 0.8 = 20 GB/s per node (one flow: 10 GB/s), α_o = 5 µs; 4 GPUs per node.
ClusterSpec toy(int gpus_per_node = 4, int nodes = 4) {
  ClusterSpec c;
  c.name = "toy";
  c.nodes = nodes;
  c.gpus_per_node = gpus_per_node;
  c.intra = {gpus_per_node > 1 ? "nvswitch" : "none", gpus_per_node > 1 ? 100e9 : 0.0,
             gpus_per_node > 1 ? 1e-6 : 0.0, gpus_per_node > 1 ? 0.5 : 1.0};
  c.inter = {2, 12.5e9, 5e-6, 0.8, "star", 1};
  return c;
}

double t(const ClusterSpec& c, K kind, A algo, int ranks, double bytes) {
  return collective_algo_time_s(c, kind, algo, contiguous_group(c, ranks), bytes);
}

constexpr double GB = 1e9;
Approx near(double x) { return Approx(x).epsilon(1e-12); }

}  // namespace

TEST_CASE("ring_time_s is steps·α + factor·S·β from the ring table and 0 for one rank",
          "[costmodel][collective]") {
  LinkTier tier{2e-6, 1e-10};
  CHECK(ring_time_s(K::all_reduce, 4, GB, tier) == Approx(6 * 2e-6 + 1.5 * GB * 1e-10));
  CHECK(ring_time_s(K::all_gather, 4, GB, tier) == Approx(3 * 2e-6 + 0.75 * GB * 1e-10));
  CHECK(ring_time_s(K::reduce_scatter, 4, GB, tier) == Approx(3 * 2e-6 + 0.75 * GB * 1e-10));
  CHECK(ring_time_s(K::all_to_all, 4, GB, tier) == Approx(3 * 2e-6 + 0.75 * GB * 1e-10));
  CHECK(ring_time_s(K::send_recv, 4, GB, tier) == Approx(2e-6 + GB * 1e-10));
  for (const CollectiveInfo& info : collective_kinds()) {
    CHECK(ring_time_s(info.kind, 1, GB, tier) == 0);
    CHECK(ring_time_s(info.kind, 0, GB, tier) == 0);
  }
}

TEST_CASE("busbw factors equal nccl-tests': all_reduce 2(n-1)/n, gather/scatter/alltoall (n-1)/n, sendrecv 1",
          "[costmodel][collective]") {
  for (int n : {1, 2, 3, 8, 64}) {
    CAPTURE(n);
    CHECK(collective_info(K::all_reduce).bw_factor(n) == Approx(2.0 * (n - 1) / n));
    CHECK(collective_info(K::all_gather).bw_factor(n) == Approx(double(n - 1) / n));
    CHECK(collective_info(K::reduce_scatter).bw_factor(n) == Approx(double(n - 1) / n));
    CHECK(collective_info(K::all_to_all).bw_factor(n) == Approx(double(n - 1) / n));
    CHECK(collective_info(K::send_recv).bw_factor(n) == 1);
    CHECK(collective_info(K::all_reduce).latency_steps(n) == 2 * (n - 1));
    CHECK(collective_info(K::all_gather).latency_steps(n) == n - 1);
    CHECK(collective_info(K::send_recv).latency_steps(n) == 1);
  }
  // 1 GB in 10 ms is 100 GB/s algbw; 8 ranks: AR busbw 175, AG 87.5, sendrecv 100.
  CHECK(algbw_GBps(GB, 0.01) == Approx(100));
  CHECK(busbw_GBps(K::all_reduce, 8, GB, 0.01) == Approx(175));
  CHECK(busbw_GBps(K::all_gather, 8, GB, 0.01) == Approx(87.5));
  CHECK(busbw_GBps(K::send_recv, 8, GB, 0.01) == Approx(100));
  CHECK(algbw_GBps(GB, 0) == 0);
}

TEST_CASE("the kind table has one row per kind, named as nccl-tests names its binaries",
          "[costmodel][collective]") {
  REQUIRE(collective_kinds().size() == kCollectiveKindCount);
  for (const CollectiveInfo& info : collective_kinds()) {
    CHECK(&collective_info(info.kind) == &info);
    CHECK(find_collective(info.name) == &info);
  }
  CHECK(collective_info(K::all_reduce).nccl_tests_name == "all_reduce_perf");
  CHECK(collective_info(K::all_to_all).nccl_tests_name == "alltoall_perf");
  CHECK(collective_info(K::send_recv).nccl_tests_name == "sendrecv_perf");
  CHECK(find_collective("allreduce") == nullptr);
  CHECK(collective_algo_name(A::hierarchical) == "hierarchical");
}

TEST_CASE("on one node every kind uses the intra tier: hand-computed α-β times",
          "[costmodel][collective]") {
  ClusterSpec c = toy();  // 4 ranks, 1 node: α = 1 µs, β = 2e-11 s/B
  CHECK(t(c, K::all_reduce, A::ring, 4, GB) == near(6e-6 + 0.03));
  CHECK(t(c, K::all_gather, A::ring, 4, GB) == near(3e-6 + 0.015));
  CHECK(t(c, K::reduce_scatter, A::ring, 4, GB) == near(3e-6 + 0.015));
  CHECK(t(c, K::all_to_all, A::direct, 4, GB) == near(3e-6 + 0.015));
  CHECK(t(c, K::send_recv, A::direct, 4, GB) == near(1e-6 + 0.02));
  // Multi-node algorithms do not apply inside one node.
  CHECK(t(c, K::all_reduce, A::tree, 4, GB) < 0);
  CHECK(t(c, K::all_reduce, A::hierarchical, 4, GB) < 0);
  CHECK(t(c, K::all_gather, A::hierarchical, 4, GB) < 0);
}

TEST_CASE("across two nodes each algorithm matches its hand-computed α-β time",
          "[costmodel][collective]") {
  // 8 ranks = 2 nodes × 4. Ring step: α = max(1, 5) µs, β = 1/min(50, 20 GB/s) = 5e-11.
  // Hierarchical inter tier: β_e = 4 ranks / 20 GB/s = 2e-10 s/B on S/4.
  ClusterSpec c = toy();
  CHECK(t(c, K::all_reduce, A::ring, 8, GB) == near(14 * 5e-6 + 1.75 * GB * 5e-11));
  CHECK(t(c, K::all_gather, A::ring, 8, GB) == near(7 * 5e-6 + 0.875 * GB * 5e-11));
  CHECK(t(c, K::reduce_scatter, A::ring, 8, GB) == near(7 * 5e-6 + 0.875 * GB * 5e-11));
  // Tree: 2·(⌈log2 2⌉·5 µs + 3·1 µs) + 2·S·5e-11.
  CHECK(t(c, K::all_reduce, A::tree, 8, GB) == near(16e-6 + 0.1));
  // Hierarchical AR: RS intra (3 µs + 0.015) + AR inter over S/4 (10 µs + 0.05) + AG intra.
  CHECK(t(c, K::all_reduce, A::hierarchical, 8, GB) == near(16e-6 + 0.08));
  // Hierarchical AG/RS: inter over S/4 (5 µs + 0.025) + intra (3 µs + 0.015).
  CHECK(t(c, K::all_gather, A::hierarchical, 8, GB) == near(8e-6 + 0.04));
  CHECK(t(c, K::reduce_scatter, A::hierarchical, 8, GB) == near(8e-6 + 0.04));
  // All-to-all: 7·5 µs + max(3/8·S·2e-11, 4/8·S·2e-10).
  CHECK(t(c, K::all_to_all, A::direct, 8, GB) == near(35e-6 + 0.1));
  // Send/recv: the node-crossing hop is one flow through one NIC (12.5 GB/s × 0.8).
  CHECK(t(c, K::send_recv, A::direct, 8, GB) == near(5e-6 + 0.1));
  // Kinds an algorithm does not cover.
  CHECK(t(c, K::all_gather, A::tree, 8, GB) < 0);
  CHECK(t(c, K::all_to_all, A::ring, 8, GB) < 0);
  CHECK(t(c, K::all_to_all, A::hierarchical, 8, GB) < 0);
  CHECK(t(c, K::send_recv, A::ring, 8, GB) < 0);
  CHECK(t(c, K::all_reduce, A::direct, 8, GB) < 0);
}

TEST_CASE("with one GPU per node the ring runs on the NICs alone and hierarchical does not apply",
          "[costmodel][collective]") {
  ClusterSpec c = toy(1, 4);  // no intra fabric at all
  CHECK(t(c, K::all_reduce, A::ring, 4, GB) == near(6 * 5e-6 + 1.5 * GB * 5e-11));
  CHECK(t(c, K::all_reduce, A::tree, 4, GB) == near(2 * 2 * 5e-6 + 2 * GB * 5e-11));
  CHECK(t(c, K::all_reduce, A::hierarchical, 4, GB) < 0);
  CHECK(t(c, K::all_to_all, A::direct, 4, GB) == near(3 * 5e-6 + 0.75 * GB * 5e-11));
  CHECK(t(c, K::send_recv, A::direct, 4, GB) == near(5e-6 + GB / 10e9));
}

TEST_CASE("tree latency grows with ceil(log2 nodes): 3 nodes cost as 4", "[costmodel][collective]") {
  ClusterSpec c = toy(1, 4);
  CHECK(t(c, K::all_reduce, A::tree, 3, 0) == near(2 * 2 * 5e-6));
  CHECK(t(c, K::all_reduce, A::tree, 2, 0) == near(2 * 1 * 5e-6));
}

TEST_CASE("a one-rank group costs nothing for every kind", "[costmodel][collective]") {
  ClusterSpec c = toy();
  for (const CollectiveInfo& info : collective_kinds()) {
    CAPTURE(info.name);
    CHECK(collective_time(c, info.kind, contiguous_group(c, 1), GB).time_s == 0);
  }
}

TEST_CASE("collective_time picks the fastest applicable algorithm", "[costmodel][collective]") {
  ClusterSpec c = toy();
  for (const CollectiveInfo& info : collective_kinds()) {
    for (int ranks : {2, 4, 8, 16}) {
      for (double bytes : {8.0, 1e6, 1e9}) {
        CAPTURE(info.name, ranks, bytes);
        CollectiveEstimate best = collective_time(c, info.kind, contiguous_group(c, ranks), bytes);
        CHECK(best.time_s == t(c, info.kind, best.algo, ranks, bytes));
        for (A algo : {A::ring, A::tree, A::hierarchical, A::direct}) {
          double other = t(c, info.kind, algo, ranks, bytes);
          if (other >= 0) CHECK(best.time_s <= other);
        }
      }
    }
  }
}

TEST_CASE("on 4 DGX A100 nodes the ring wins 1 GiB all-reduces and tree or hierarchical wins 8 B",
          "[costmodel][collective]") {
  ClusterSpec c = resolve_cluster("dgx-a100");
  CommGroup all = contiguous_group(c, 32);
  REQUIRE(all.nodes() == 4);
  CHECK(collective_time(c, K::all_reduce, all, 1 << 30).algo == A::ring);
  A small = collective_time(c, K::all_reduce, all, 8).algo;
  CHECK((small == A::tree || small == A::hierarchical));
  A small_ag = collective_time(c, K::all_gather, all, 8 * 32).algo;
  CHECK(small_ag == A::hierarchical);
}

TEST_CASE("large all-reduce busbw approaches the bottleneck link bandwidth for any rank count",
          "[costmodel][collective]") {
  // nccl-tests' rationale for busbw: it is independent of n and compares to the hardware.
  ClusterSpec c = resolve_cluster("dgx-a100");
  double bytes = 8.0 * (1 << 30);
  for (int ranks : {2, 4, 8}) {
    double s = collective_time(c, K::all_reduce, contiguous_group(c, ranks), bytes).time_s;
    CHECK(busbw_GBps(K::all_reduce, ranks, bytes, s) ==
          Approx(c.intra_bw_bytes_per_s() / 1e9).epsilon(1e-3));
  }
  for (int ranks : {16, 32}) {
    double s = collective_time(c, K::all_reduce, contiguous_group(c, ranks), bytes).time_s;
    CHECK(busbw_GBps(K::all_reduce, ranks, bytes, s) ==
          Approx(c.node_nic_bw_bytes_per_s() / 1e9).epsilon(1e-2));  // 62 steps of 4 µs: 0.3%
  }
}

TEST_CASE("contiguous groups pack ranks onto nodes and reject rank counts the cluster lacks",
          "[costmodel][collective]") {
  ClusterSpec c = resolve_cluster("dgx-a100");  // 4 × 8
  CommGroup g3 = contiguous_group(c, 3);
  CHECK((g3.ranks == 3 && g3.ranks_per_node == 3 && g3.nodes() == 1));
  CommGroup g12 = contiguous_group(c, 12);
  CHECK((g12.ranks == 12 && g12.ranks_per_node == 8 && g12.nodes() == 2));
  try {
    contiguous_group(c, 0);
    FAIL("no error for 0 ranks");
  } catch (const autoddl::InputError& e) {
    CHECK(e.file() == "--ranks");
    CHECK(e.reason() == "must be >= 1 (got 0)");
  }
  try {
    contiguous_group(c, 33);
    FAIL("no error for 33 ranks");
  } catch (const autoddl::InputError& e) {
    CHECK(e.file() == "--ranks");
    CHECK_THAT(e.reason(), Catch::Contains("<= 32") && Catch::Contains("(got 33)"));
  }
}
