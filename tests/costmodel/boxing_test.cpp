// Pins DESIGN.md's boxing formulas against hand-computed α-β values, the nd rule (one dim
// differs → 1-D rule on |T| over the other dims' splits; several → cheapest path of per-dim
// steps), and the hierarchical all-reduce on [nodes, gpus].
#include <catch2/catch.hpp>

#include "autoddl/costmodel/boxing.hpp"
#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/mesh.hpp"

using namespace autoddl::costmodel;

namespace {

// A cluster with round numbers: intra α 1 µs, 100 GB/s; one 10 GB/s NIC per node, α 10 µs.
ClusterSpec round_cluster(int nodes, int gpus) {
  ClusterSpec c = resolve_cluster("dgx-a100");
  c.nccl.reset();  // these tests pin the α-β ring formulas, not NCCL's model
  c.nodes = nodes;
  c.gpus_per_node = gpus;
  c.intra = {"nvswitch", 100e9, 1e-6, 1.0};
  c.inter.nics_per_node = 1;
  c.inter.nic_bw_bytes_per_s = 10e9;
  c.inter.latency_s = 10e-6;
  c.inter.efficiency = 1.0;
  return c;
}

NdSbp nd(std::initializer_list<Sbp> dims) {
  NdSbp s;
  for (Sbp d : dims) s.dims[s.ndims++] = d;
  return s;
}

const Sbp S0 = Sbp::split(0), S1 = Sbp::split(1), B = Sbp::broadcast(), P = Sbp::partial();

}  // namespace

TEST_CASE("1-D boxing on p devices matches the ring alpha-beta formulas of DESIGN.md", "[costmodel][boxing]") {
  ClusterSpec c = round_cluster(1, 8);
  DeviceMesh mesh = make_mesh(c, {8});
  const Shape shape{64, 1024};
  const double T = 64.0 * 1024 * 4;  // bytes
  const double a = 1e-6, b = 1.0 / 100e9, p = 8;
  CHECK(boxing_time_s(mesh, shape, T, nd({S0}), nd({B})) == Approx((p - 1) * a + (p - 1) / p * T * b));
  CHECK(boxing_time_s(mesh, shape, T, nd({P}), nd({B})) == Approx(2 * (p - 1) * a + 2 * (p - 1) / p * T * b));
  CHECK(boxing_time_s(mesh, shape, T, nd({P}), nd({S1})) == Approx((p - 1) * a + (p - 1) / p * T * b));
  CHECK(boxing_time_s(mesh, shape, T, nd({S0}), nd({S1})) == Approx((p - 1) * a + (p - 1) / (p * p) * T * b));
  CHECK(boxing_time_s(mesh, shape, T, nd({B}), nd({S0})) == 0);
  CHECK(boxing_time_s(mesh, shape, T, nd({B}), nd({P})) == 0);
  CHECK(boxing_time_s(mesh, shape, T, nd({S0}), nd({P})) == 0);
  CHECK(boxing_time_s(mesh, shape, T, nd({S1}), nd({S1})) == 0);
}

TEST_CASE("a 1-device mesh makes every conversion free", "[costmodel][boxing]") {
  ClusterSpec c = round_cluster(1, 8);
  DeviceMesh mesh = make_mesh(c, {1});
  BoxingTable t(mesh, {8, 8}, 256);
  for (int i = 0; i < static_cast<int>(t.states().size()); ++i) {
    for (int j = 0; j < static_cast<int>(t.states().size()); ++j) CHECK(t.time_s(i, j) == 0);
  }
}

TEST_CASE("2-D boxing where one dim differs applies the 1-D rule to |T| over the other dim's split",
          "[costmodel][boxing]") {
  ClusterSpec c = round_cluster(4, 8);
  DeviceMesh mesh = make_mesh(c, {4, 8});
  const Shape shape{64, 4096};
  const double T = 64.0 * 4096 * 2;
  // (S0, P) -> (S0, B): all-reduce inside each node of the node's quarter of T.
  double intra = 14 * 1e-6 + 2 * 7.0 / 8 * (T / 4) / 100e9;
  CHECK(boxing_time_s(mesh, shape, T, nd({S0, P}), nd({S0, B})) == Approx(intra));
  // (P, B) -> (B, B): all-reduce across 4 nodes; 8 GPUs per node share the NIC.
  const double beta_e = 8 / 10e9;
  double inter = 2 * 3 * 10e-6 + 2 * 3.0 / 4 * T * beta_e;
  CHECK(mesh.dims[0].tier.beta_s_per_byte == Approx(beta_e));
  BoxingStep step;
  REQUIRE(boxing_step_1d(mesh, 0, P, B, T, step));
  CHECK(step.kind == CollectiveKind::all_reduce);
  CHECK(step.time_s == Approx(inter));
  // The table may do better through a middle state: slice locally to (P,S0), all-reduce an
  // eighth across nodes, all-gather inside the node. It takes whichever is cheaper.
  double via_slice = 2 * 3 * 10e-6 + 2 * 3.0 / 4 * (T / 8) * beta_e + 7 * 1e-6 + 7.0 / 8 * T / 100e9;
  CHECK(boxing_time_s(mesh, shape, T, nd({P, B}), nd({B, B})) == Approx(std::min(inter, via_slice)));
}

TEST_CASE("2-D boxing where both dims differ costs the cheapest sequence of per-dim steps",
          "[costmodel][boxing]") {
  ClusterSpec c = round_cluster(2, 4);
  DeviceMesh mesh = make_mesh(c, {2, 4});
  const Shape shape{64, 64};
  const double T = 64.0 * 64 * 4;
  // (S0,S1) -> (B,B): gather dim 1 then dim 0, or dim 0 then dim 1; the table takes the cheaper.
  double g1_then_g0 = boxing_time_s(mesh, shape, T, nd({S0, S1}), nd({S0, B})) +
                      boxing_time_s(mesh, shape, T, nd({S0, B}), nd({B, B}));
  double g0_then_g1 = boxing_time_s(mesh, shape, T, nd({S0, S1}), nd({B, S1})) +
                      boxing_time_s(mesh, shape, T, nd({B, S1}), nd({B, B}));
  double direct = boxing_time_s(mesh, shape, T, nd({S0, S1}), nd({B, B}));
  CHECK(direct <= std::min(g1_then_g0, g0_then_g1) * (1 + 1e-12));
  CHECK(direct == Approx(std::min(g1_then_g0, g0_then_g1)));
}

TEST_CASE("all-reduce of (P,P) on [nodes, gpus] is hierarchical: RS intra, AR inter on |T|/g, AG intra",
          "[costmodel][boxing]") {
  ClusterSpec c = round_cluster(4, 8);
  DeviceMesh mesh = make_mesh(c, {4, 8});
  const Shape shape{1 << 20};
  const double T = (1 << 20) * 4.0;
  BoxingTable table(mesh, shape, T);
  int from = table.index_of(nd({P, P})), to = table.index_of(nd({B, B}));
  std::vector<BoxingStep> path = table.path(from, to);
  REQUIRE(path.size() == 3);
  CHECK(path[0].kind == CollectiveKind::reduce_scatter);
  CHECK(path[0].dim == 1);
  CHECK(path[1].kind == CollectiveKind::all_reduce);
  CHECK(path[1].dim == 0);
  CHECK(path[1].bytes == Approx(T / 8));
  CHECK(path[2].kind == CollectiveKind::all_gather);
  CHECK(path[2].dim == 1);
  double hier = (7 * 1e-6 + 7.0 / 8 * T / 100e9) * 2 + 2 * 3 * 10e-6 + 2 * 3.0 / 4 * (T / 8) * (8 / 10e9);
  CHECK(table.time_s(from, to) == Approx(hier));
  // And it is cheaper than two flat all-reduces of the full tensor.
  double flat = boxing_time_s(mesh, shape, T, nd({P, P}), nd({P, B})) + boxing_time_s(mesh, shape, T, nd({P, B}), nd({B, B}));
  CHECK(table.time_s(from, to) < flat);
}

TEST_CASE("a boxing path tallies each collective's count and per-device wire bytes", "[costmodel][boxing]") {
  ClusterSpec c = round_cluster(1, 8);
  DeviceMesh mesh = make_mesh(c, {8});
  BoxingTable table(mesh, {1024}, 4096);
  CommTally tally;
  table.tally(table.index_of(nd({P})), table.index_of(nd({B})), tally, 3);
  CHECK(tally.count[static_cast<size_t>(CollectiveKind::all_reduce)] == 3);
  CHECK(tally.bytes[static_cast<size_t>(CollectiveKind::all_reduce)] == Approx(3 * 2 * 7.0 / 8 * 4096));
  CHECK(tally.total_s() == Approx(3 * (14e-6 + 2 * 7.0 / 8 * 4096 / 100e9)));
}

TEST_CASE("a boxing step on a mesh dim never moves a split of an axis that a higher dim also splits",
          "[costmodel][boxing]") {
  // Dims nest lower-outer: under (S(1),S(1)) on 2x2, rank (i, j) holds quarter 2i + j of axis 1, so
  // (B,S(1)) (half j: quarters 2j and 2j + 1) is no all-gather over dim 0. The route goes through
  // the higher dim (gather it, step dim 0, slice it again), as the CPU executor runs it.
  ClusterSpec c = round_cluster(2, 2);
  DeviceMesh mesh = make_mesh(c, {2, 2});
  const Shape shape = {8, 8};
  const BoxingTable exact(mesh, shape, 256.0);
  const std::vector<NdSbp> route = exact.route(exact.index_of(nd({S1, S1})), exact.index_of(nd({B, S1})));
  REQUIRE(route.size() >= 3);
  for (size_t k = 1; k < route.size(); ++k) {
    int d = 0;
    while (route[k - 1].dims[d] == route[k].dims[d]) ++d;
    INFO("step " << k << ": " << to_string(route[k - 1]) << " -> " << to_string(route[k]));
    // A step on dim 0 that touches axis 1 happens only while dim 1 does not split axis 1.
    if (d == 0 && (route[k - 1].dims[0] == S1 || route[k].dims[0] == S1)) CHECK_FALSE(route[k - 1].dims[1] == S1);
  }
  // A parameter's storage has no fixed block order: there the one all-gather over dim 0 is allowed.
  const BoxingTable storage(mesh, shape, 256.0, /*exact_layout=*/false);
  const auto one = storage.path(storage.index_of(nd({S1, S1})), storage.index_of(nd({B, S1})));
  REQUIRE(one.size() == 1);
  CHECK(one[0].dim == 0);
  CHECK(one[0].kind == CollectiveKind::all_gather);
  CHECK(exact.time_s(exact.index_of(nd({S1, S1})), exact.index_of(nd({B, S1}))) >
        storage.time_s(storage.index_of(nd({S1, S1})), storage.index_of(nd({B, S1}))));
}
