// Each builder gives the strategy its source documents (reference/autosync.md §2, §7) on a
// small model; expected placements are worked out by hand in the comments.
#include "autoddl/sync/builders.hpp"

#include <catch2/catch.hpp>
#include <map>

#include "autoddl/costmodel/zoo.hpp"
#include "../costmodel/input_error.hpp"
#include "tiny.hpp"

using namespace autoddl::sync;
using namespace autoddl::costmodel;

namespace {
Strategy build(const std::string& name, const std::vector<Variable>& vars, const ClusterSpec& c) {
  Strategy s = find_builder(name).build(vars, c);
  validate_strategy(s, vars, c, name);  // every builder's output is a valid strategy
  return s;
}
std::map<std::string, VarConfig> by_var(const Strategy& s) {
  std::map<std::string, VarConfig> m;
  for (const VarConfig& v : s.vars) m[v.var] = v;
  return m;
}
std::vector<int> servers(const VarConfig& v) {
  std::vector<int> out;
  for (const Synchronizer& p : v.parts) {
    CHECK(p.arch == Arch::ps);
    out.push_back(p.server);
  }
  return out;
}
int group_of(const VarConfig& v) {
  REQUIRE(v.parts.size() == 1);
  CHECK(v.parts[0].arch == Arch::all_reduce);
  return v.parts[0].group;
}
}  // namespace

TEST_CASE("AutoDist's shard counts: smallest divisor, smallest non-divisor", "[sync][builders]") {
  CHECK(smallest_divisor_shards(1000) == 2);
  CHECK(smallest_divisor_shards(9) == 3);
  CHECK(smallest_divisor_shards(7) == 7);  // prime: one row per shard
  CHECK(smallest_divisor_shards(1) == 1);
  CHECK(smallest_non_divisor_shards(12) == 5);
  CHECK(smallest_non_divisor_shards(1000) == 3);
  CHECK(smallest_non_divisor_shards(6) == 4);
  CHECK(smallest_non_divisor_shards(2) == 1);  // 3 shards of 2 rows cannot be
}

TEST_CASE("PS, PS load balancing and the partitioned PSs place variables as AutoDist does",
          "[sync][builders]") {
  std::vector<Variable> vars = extract_variables(test::tiny_model());
  ClusterSpec c = test::test_cluster(3, 2);
  SECTION("ps: everything on the first server, no proxy, synchronous") {
    for (const VarConfig& v : build("ps", vars, c).vars) {
      CHECK(servers(v) == std::vector<int>{0});
      CHECK_FALSE(v.parts[0].local_replication);
      CHECK(v.parts[0].sync);
    }
  }
  SECTION("ps_lb: greedy least-loaded by bytes in graph order") {
    // emb 64000 -> 0; fc1.weight 8192 -> 1; fc1.bias 128 -> 2; fc2.weight 1280 -> 2 (load 128);
    // fc2.bias 40 -> 2 (load 1408 < 8192)
    auto m = by_var(build("ps_lb", vars, c));
    CHECK(servers(m["emb.table"]) == std::vector<int>{0});
    CHECK(servers(m["fc1.weight"]) == std::vector<int>{1});
    CHECK(servers(m["fc1.bias"]) == std::vector<int>{2});
    CHECK(servers(m["fc2.weight"]) == std::vector<int>{2});
    CHECK(servers(m["fc2.bias"]) == std::vector<int>{2});
  }
  SECTION("partitioned_ps: axis 0 into the smallest divisor, shards to the least-loaded servers") {
    // emb 1000 rows -> 2 shards of 32000 B: 0, 1 (loads 32000, 32000, 0); fc1.weight 64 rows ->
    // 2 x 4096: 2, then 0 (tie 0/1 -> first); fc1.bias 2 x 64: 2, then 1 (32000 < 36096);
    // fc2.weight 2 x 640: 2, 1; fc2.bias 2 x 20: 2, 1
    auto m = by_var(build("partitioned_ps", vars, c));
    for (auto& [name, v] : m) {
      CHECK(v.shards == 2);
      CHECK(v.axis == 0);
      CHECK_FALSE(v.uneven);
    }
    CHECK(servers(m["emb.table"]) == std::vector<int>{0, 1});
    CHECK(servers(m["fc1.weight"]) == std::vector<int>{2, 0});
    CHECK(servers(m["fc1.bias"]) == std::vector<int>{2, 1});
    CHECK(servers(m["fc2.weight"]) == std::vector<int>{2, 1});
    CHECK(servers(m["fc2.bias"]) == std::vector<int>{2, 1});
  }
  SECTION("uneven_partitioned_ps: the smallest non-divisor, shards one row apart") {
    auto m = by_var(build("uneven_partitioned_ps", vars, c));
    CHECK(m["emb.table"].shards == 3);  // 1000 % 2 == 0, 1000 % 3 != 0
    CHECK(m["emb.table"].uneven);
    CHECK(shard_extent(1000, 3, 0) == 334);
    CHECK(shard_extent(1000, 3, 2) == 333);
    CHECK(m["fc2.bias"].shards == 3);   // 10 rows: 4, 3, 3
    // three shards over three servers: each server one shard
    std::vector<int> s = servers(m["emb.table"]);
    std::sort(s.begin(), s.end());
    CHECK(s == std::vector<int>{0, 1, 2});
  }
  SECTION("one server: the partitioned PS leaves variables whole") {
    for (const VarConfig& v : build("partitioned_ps", vars, test::test_cluster(1, 2)).vars)
      CHECK(v.shards == 1);
  }
}

TEST_CASE("AllReduce and PartitionedAR fuse 128 variables (shards) per group", "[sync][builders]") {
  Graph bert = build_zoo_model("bert", {});
  std::vector<Variable> vars = extract_variables(bert);
  REQUIRE(vars.size() > 128);
  ClusterSpec c = test::test_cluster(2, 4);
  Strategy ar = build("all_reduce", vars, c);
  for (size_t i = 0; i < vars.size(); ++i) {
    CHECK(ar.vars[i].var == vars[i].name);
    CHECK(group_of(ar.vars[i]) == static_cast<int>(i) / 128);
    CHECK(ar.vars[i].parts[0].compressor == Compressor::none);
    CHECK(ar.vars[i].parts[0].algorithm == ArAlgorithm::automatic);
  }
  // BERT-base's leading dimensions are all even, so every variable splits in 2 and shard i of
  // variable k is the (2k + i)-th shard: group (2k + i) / 128
  Strategy par = build("partitioned_ar", vars, c);
  for (size_t k = 0; k < vars.size(); ++k) {
    REQUIRE(par.vars[k].shards == 2);
    for (int i = 0; i < 2; ++i) CHECK(par.vars[k].parts[i].group == (2 * static_cast<int>(k) + i) / 128);
  }
}

TEST_CASE("Parallax: sparse gradients to load-balanced PS, dense ones all-reduced",
          "[sync][builders]") {
  std::vector<Variable> vars = extract_variables(build_zoo_model("ncf", {}));
  ClusterSpec c = test::test_cluster(4, 1);
  auto m = by_var(build("parallax", vars, c));
  // the four tables in graph order: gmf.user (6040x8 fp32 = 193280 B) -> 0, gmf.item
  // (3706x8 = 118592) -> 1, mlp.user (6040x128) -> 2, mlp.item (3706x128) -> 3
  CHECK(servers(m["gmf.user_embedding"]) == std::vector<int>{0});
  CHECK(servers(m["gmf.item_embedding"]) == std::vector<int>{1});
  CHECK(servers(m["mlp.user_embedding"]) == std::vector<int>{2});
  CHECK(servers(m["mlp.item_embedding"]) == std::vector<int>{3});
  int dense = 0;
  for (const Variable& v : vars) {
    if (v.sparse) continue;
    ++dense;
    CHECK(group_of(m[v.name]) == 0);  // fewer than 128 dense variables
    CHECK_FALSE(m[v.name].parts[0].local_replication);
  }
  CHECK(dense > 0);
}

// parallax_strategy.py numbers groups by `idx // chunk_size` with idx enumerating ALL trainable
// variables, sparse ones included. BERT-base here has 206 variables in graph order; the
// sparse ones are embeddings.position (index 1) and embeddings.token_type (index 2) (the word
// embedding is tied to the MLM decoder, so dense). By AutoDist's rule indices 0..127 are
// group 0, which holds the 128 − 2 = 126 dense ones among them, and indices 128..205 are group
// 1: 78 variables, the first layer.7.ffn.fc1.bias (index 128). Counting dense variables only
// would give 128 and 76.
TEST_CASE("Parallax groups BERT's dense variables by their index among all variables as AutoDist does",
          "[sync][builders]") {
  std::vector<Variable> vars = extract_variables(build_zoo_model("bert", {}));
  REQUIRE(vars.size() == 206);
  REQUIRE(vars[1].name == "embeddings.position");
  REQUIRE(vars[2].name == "embeddings.token_type");
  REQUIRE(vars[1].sparse);
  REQUIRE(vars[2].sparse);
  int sparse = 0;
  for (const Variable& v : vars) sparse += v.sparse ? 1 : 0;
  REQUIRE(sparse == 2);
  Strategy s = build("parallax", vars, test::test_cluster(4, 1));
  std::map<int, int> members;
  for (size_t i = 0; i < vars.size(); ++i) {
    const Synchronizer& p = s.vars[i].parts[0];
    if (p.arch == Arch::all_reduce) members[p.group] += 1;
  }
  CHECK(members == std::map<int, int>{{0, 126}, {1, 78}});
  CHECK(vars[128].name == "layer.7.ffn.fc1.bias");
  CHECK(s.vars[127].parts[0].group == 0);
  CHECK(s.vars[128].parts[0].group == 1);
}

TEST_CASE("DDP buckets VGG16's gradients: 1 MiB first bucket, then 25 MiB, in ready order",
          "[sync][builders]") {
  std::vector<Variable> vars = extract_variables(build_zoo_model("vgg16", {}));
  auto m = by_var(build("ddp", vars, test::test_cluster(2, 4)));
  // ready order fc8.bias (4000 B), fc8.weight (16.4 MB): crosses 1 MiB -> bucket 0 closes;
  // fc7.bias, fc7.weight (64 MiB) -> bucket 1; fc6 -> bucket 2; then stage 5's three convs
  // (9.44 MB weights): 18.9 MB after two, 28.3 MB >= 25 MiB after the third -> bucket 3
  CHECK(group_of(m["fc8.bias"]) == 0);
  CHECK(group_of(m["fc8.weight"]) == 0);
  CHECK(group_of(m["fc7.bias"]) == 1);
  CHECK(group_of(m["fc7.weight"]) == 1);
  CHECK(group_of(m["fc6.bias"]) == 2);
  CHECK(group_of(m["fc6.weight"]) == 2);
  for (const char* n : {"stage.5.conv3.bias", "stage.5.conv3.weight", "stage.5.conv2.weight",
                        "stage.5.conv1.weight"})
    CHECK(group_of(m[n]) == 3);
  CHECK(group_of(m["stage.4.conv3.bias"]) == 4);
}

TEST_CASE("Horovod fuses VGG16's gradients into 64 MiB buffers in ready order",
          "[sync][builders]") {
  std::vector<Variable> vars = extract_variables(build_zoo_model("vgg16", {}));
  auto m = by_var(build("horovod", vars, test::test_cluster(2, 4)));
  // fc8.bias + fc8.weight + fc7.bias = 16.4 MB fit; fc7.weight (exactly 64 MiB) does not fit
  // on top -> alone; fc6.bias cannot join it; fc6.weight (411 MB) alone; then all 13 convs
  // (58.9 MB together) share one buffer
  CHECK(group_of(m["fc8.bias"]) == 0);
  CHECK(group_of(m["fc8.weight"]) == 0);
  CHECK(group_of(m["fc7.bias"]) == 0);
  CHECK(group_of(m["fc7.weight"]) == 1);
  CHECK(group_of(m["fc6.bias"]) == 2);
  CHECK(group_of(m["fc6.weight"]) == 3);
  CHECK(group_of(m["stage.5.conv3.bias"]) == 4);
  CHECK(group_of(m["stage.1.conv1.weight"]) == 4);
}

TEST_CASE("an unknown builder names --builder and lists the known ones", "[sync][builders]") {
  auto e = input_error_of([] { find_builder("byteps"); });
  REQUIRE(e);
  CHECK(e->file() == "--builder");
  CHECK(e->reason() ==
        "unknown builder 'byteps' (known: ps, ps_lb, partitioned_ps, uneven_partitioned_ps, "
        "all_reduce, partitioned_ar, parallax, horovod, ddp, horovod-fp16, ddp-fp16)");
}
