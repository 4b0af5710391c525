// Pins SBP text round trips, split-divisibility, and the α-β each mesh dim gets from the cluster:
// dims inside a node use NVLink; dims crossing nodes share the node's NICs among its groups.
#include <catch2/catch.hpp>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/mesh.hpp"
#include "autoddl/costmodel/sbp.hpp"

using namespace autoddl::costmodel;

TEST_CASE("nd-SBP strings round-trip and malformed ones are rejected", "[costmodel][sbp]") {
  for (const char* text : {"(S(0),B)", "(P,S(12))", "(B,B,S(3))"}) {
    NdSbp s;
    int nd = std::string(text).find(",B,") != std::string::npos ? 3 : 2;
    REQUIRE(parse_nd_sbp(text, nd, s));
    CHECK(to_string(s) == text);
  }
  NdSbp one;
  REQUIRE(parse_nd_sbp("S(1)", 1, one));
  CHECK(to_string(one) == "S(1)");
  NdSbp bad;
  CHECK_FALSE(parse_nd_sbp("(S(0),B)", 3, bad));
  CHECK_FALSE(parse_nd_sbp("(S0,B)", 2, bad));
  CHECK_FALSE(parse_nd_sbp("(Q,B)", 2, bad));
}

TEST_CASE("a split must divide its axis by the product of the mesh dims splitting it", "[costmodel][sbp]") {
  int mesh[] = {4, 8};
  NdSbp s;
  REQUIRE(parse_nd_sbp("(S(0),S(0))", 2, s));
  CHECK(divides(s, mesh, {64, 3}));
  CHECK_FALSE(divides(s, mesh, {16, 3}));
  REQUIRE(parse_nd_sbp("(S(0),S(1))", 2, s));
  CHECK(divides(s, mesh, {4, 8}));
  CHECK_FALSE(divides(s, mesh, {4, 4}));
  CHECK_FALSE(divides(s, mesh, {4}));  // axis 1 does not exist
  CHECK(local_bytes(s, mesh, 3200) == Approx(100));
}

TEST_CASE("mesh dims get NVLink inside a node and a NIC share across nodes", "[costmodel][mesh]") {
  ClusterSpec c = resolve_cluster("dgx-a100", 4);
  DeviceMesh m = default_mesh(c);
  REQUIRE(m.shape() == std::vector<int>{4, 8});
  CHECK(m.dims[1].crosses_nodes == false);
  CHECK(m.dims[1].tier.alpha_s == c.intra.latency_s);
  CHECK(m.dims[1].tier.beta_s_per_byte == Approx(1 / c.intra_bw_bytes_per_s()));
  CHECK(m.dims[0].crosses_nodes);
  CHECK(m.dims[0].groups_per_node == 8);
  CHECK(m.dims[0].tier.alpha_s == c.inter.latency_s);
  CHECK(m.dims[0].tier.beta_s_per_byte == Approx(8 / c.node_nic_bw_bytes_per_s()));
  // One flat group of all 32 GPUs: a ring bounded by the slower of NVLink and the node's NICs.
  DeviceMesh flat = make_mesh(c, {32});
  CHECK(flat.dims[0].groups_per_node == 1);
  CHECK(flat.dims[0].tier.beta_s_per_byte ==
        Approx(std::max(1 / c.intra_bw_bytes_per_s(), 1 / c.node_nic_bw_bytes_per_s())));
  // [2,4] on one node stays on NVLink in both dims.
  DeviceMesh small = make_mesh(resolve_cluster("dgx-a100", 1), {2, 4});
  CHECK_FALSE(small.dims[0].crosses_nodes);
  CHECK_FALSE(small.dims[1].crosses_nodes);
}

TEST_CASE("meshes that do not fit the cluster name --mesh and the reason", "[costmodel][mesh]") {
  ClusterSpec c = resolve_cluster("dgx-a100", 2);
  CHECK_THROWS_WITH(make_mesh(c, {4, 8}), Catch::Contains("--mesh") && Catch::Contains("has 16 GPUs"));
  CHECK_THROWS_WITH(make_mesh(c, {12}), Catch::Contains("does not fit nodes of 8"));
  CHECK_THROWS_AS(parse_mesh_shape("4x"), autoddl::InputError);
  CHECK_THROWS_AS(parse_mesh_shape("0x8"), autoddl::InputError);
  CHECK(parse_mesh_shape("2x4x2") == std::vector<int>{2, 4, 2});
}
