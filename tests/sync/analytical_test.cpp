// The analytical evaluator against hand-computed values. Test clusters: NICs of 1e9 B/s at
// efficiency 1, α = 1e-5 s. The dense tiny model's gradients: fc1.weight 8192 B, fc1.bias 128,
// fc2.weight 1280, fc2.bias 40; 9640 B in all.
#include "autoddl/sync/analytical.hpp"

#include <catch2/catch.hpp>

#include "autoddl/sync/builders.hpp"
#include "autoddl/sync/compression.hpp"
#include "tiny.hpp"

using namespace autoddl::sync;
using namespace autoddl::costmodel;

namespace {
constexpr double kDenseBytes = 9640, kB = 1e9, kAlpha = 1e-5;

Evaluation run(const Graph& g, const ClusterSpec& c, const Strategy& s) {
  std::vector<Variable> vars = extract_variables(g);
  validate_strategy(s, vars, c, "test");
  return evaluate_analytical(g, vars, s, c);
}
Strategy built(const std::string& name, const Graph& g, const ClusterSpec& c) {
  return find_builder(name).build(extract_variables(g), c);
}
}  // namespace

TEST_CASE("one PS server and many workers: the server's NIC carries every push and pull (incast)",
          "[sync][analytical]") {
  Graph g = test::tiny_model(false);
  for (int nodes : {2, 5, 9}) {
    INFO(nodes << " nodes x 1 GPU");
    ClusterSpec c = test::test_cluster(nodes, 1);
    Evaluation e = run(g, c, built("ps", g, c));
    REQUIRE(e.servers.size() == 1);
    const ServerTerms& s = e.servers[0];
    const int remote = nodes - 1;  // node 0's own GPU does not cross the NIC
    CHECK(s.node == 0);
    CHECK(s.shards == 4);
    CHECK(s.bytes_in == remote * kDenseBytes);
    CHECK(s.transmission_s == Approx(2 * remote * kDenseBytes / kB));
    CHECK(s.overhead_s == Approx(2 * remote * 4 * kAlpha));  // 4 variables, a message each way
    CHECK(s.time_s == Approx(s.transmission_s + s.overhead_s));
    CHECK(e.ps_max_s == Approx(s.time_s));
    CHECK(e.ps_sum_s == Approx(s.time_s));
    CHECK(e.worker_nic_s == Approx(2 * kDenseBytes / kB));  // each other node's own pushes+pulls
  }
  // nodes = 5: 2·4·9640/1e9 + 2·4·4·1e-5 = 77.12 us + 320 us
  ClusterSpec c5 = test::test_cluster(5, 1);
  {
    // Contention terms: the server's NIC carries 4 pushes in one direction and 4 pulls in the
    // other (full duplex), so its busiest direction holds 4·9640 B; with every shard ready at
    // once the pipeline is all the pushes, then the last shard's pull.
    Evaluation e = run(g, c5, built("ps", g, c5));
    CHECK(e.nic_ps_max_s == Approx(4 * kDenseBytes / kB));
    CHECK(e.nic_max_s == Approx(e.nic_ps_max_s));  // no all-reduce groups
    CHECK(e.ps_duplex_end_s < e.servers[0].end_s);
    CHECK(e.ps_duplex_end_s > e.servers[0].end_s / 2);
    CHECK(e.duplex_iteration_s <= e.iteration_s);
  }
  CHECK(run(g, c5, built("ps", g, c5)).ps_max_s == Approx(77.12e-6 + 320e-6));
}

TEST_CASE("parallel senders pay α once per round: a server's shards go push round, pull round",
          "[sync][analytical]") {
  Graph g = test::tiny_model(false);
  std::vector<Variable> vars = extract_variables(g);
  SyncTimeline at_once;  // every gradient ready at the start of backward
  at_once.ready_s.assign(vars.size(), 0.0);
  {
    // 5 nodes x 1 GPU, one server: 4 remote senders share its NIC; per shard of b bytes a round
    // each way of α + 4·b/B, the 4 shards one after another: 8α + 8·9640/1e9 = 157.12 us
    // (the one-message-at-a-time model above pays 32α).
    ClusterSpec c = test::test_cluster(5, 1);
    Evaluation e = evaluate_analytical(vars, built("ps", g, c), c, at_once);
    CHECK(e.ps_lane_end_s == Approx(8 * kAlpha + 8 * kDenseBytes / kB));
    CHECK(e.lane_iteration_s == Approx(e.ps_lane_end_s));  // no compute in this timeline
    CHECK(e.ps_lane_end_s < e.servers[0].end_s);
  }
  {
    // 3 nodes with 4 NICs each: 2 senders share 4 NICs, but one flow gets at most one NIC, so a
    // round takes α + b/1e9, not α + 2·b/4e9.
    ClusterSpec c = test::test_cluster(3, 1);
    c.inter.nics_per_node = 4;
    Evaluation e = evaluate_analytical(vars, built("ps", g, c), c, at_once);
    CHECK(e.ps_lane_end_s == Approx(8 * kAlpha + 2 * kDenseBytes / kB));
  }
}

TEST_CASE("load balancing splits the incast over servers: max falls, sum stays",
          "[sync][analytical]") {
  Graph g = test::tiny_model(false);
  ClusterSpec c = test::test_cluster(4, 1);
  Evaluation one = run(g, c, built("ps", g, c));
  Evaluation lb = run(g, c, built("ps_lb", g, c));
  // ps_lb: fc1.weight -> 0, fc1.bias -> 1, fc2.weight -> 2, fc2.bias -> 3 (one each)
  REQUIRE(lb.servers.size() == 4);
  CHECK(lb.ps_sum_s == Approx(one.ps_sum_s));
  CHECK(lb.ps_max_s == Approx(2 * 3 * 8192 / kB + 2 * 3 * kAlpha));
  // the busiest NIC is node 3's, which serves only fc2.bias (40 B) and pushes the other
  // 9600 B: 2·9600 / 1e9
  CHECK(lb.worker_nic_s == Approx(2 * (kDenseBytes - 40) / kB));
}

// AutoDist's PSSynchronizer (autodist/kernel/synchronization/ps_synchronizer.py) sums a node's
// GPU gradients on the node's CPU before the push ("Hierarchical reduction at local node"),
// with or without local replication; local replication only adds a proxy copy that the node
// pulls once and its GPUs read (proxy_variable.py). Without it every GPU reads the PS.
TEST_CASE("AutoDist PS pushes one summed gradient per node and local replication pulls once per node",
          "[sync][analytical]") {
  Graph g = test::tiny_model(false);
  ClusterSpec c = test::test_cluster(3, 2);  // intra: 1e10 B/s, 1 us
  Strategy s = built("ps", g, c);
  Evaluation plain = run(g, c, s);
  // nodes 1 and 2 push one sum each; their 4 GPUs each pull (6 GPUs, 2 of them on node 0)
  CHECK(plain.servers[0].bytes_in == 2 * kDenseBytes);
  CHECK(plain.servers[0].bytes_out == 4 * kDenseBytes);
  CHECK(plain.servers[0].transmission_s == Approx(6 * kDenseBytes / kB));
  CHECK(plain.servers[0].overhead_s == Approx(4 * 6 * kAlpha));  // 4 variables, 6 messages each
  // every node first sums its 2 GPUs' gradient, a ring all-reduce of 2: 2α_i + b/1e10 per
  // variable; node 0's GPUs read the update (an all-gather of 2: α_i + b/2e10) while the
  // remote GPUs pull, which takes longer, so only the sum is charged
  CHECK(plain.servers[0].local_s == Approx(4 * 2e-6 + kDenseBytes / 1e10));
  for (VarConfig& v : s.vars) v.parts[0].local_replication = true;
  Evaluation proxy = run(g, c, s);
  CHECK(proxy.servers[0].bytes_in == 2 * kDenseBytes);
  CHECK(proxy.servers[0].bytes_out == 2 * kDenseBytes);  // one pull per node into its proxy
  // the sum, then the proxy's copies into the node's GPUs after the pull
  CHECK(proxy.servers[0].local_s == Approx(4 * 2e-6 + kDenseBytes / 1e10 + 4 * 1e-6 + kDenseBytes / 2e10));
  CHECK(proxy.iteration_s < plain.iteration_s);
}

TEST_CASE("PS on one node: no NIC but the node's sum and reads are charged", "[sync][analytical]") {
  Graph g = test::tiny_model(false);
  ClusterSpec c = test::test_cluster(1, 2);
  Evaluation e = run(g, c, built("ps", g, c));
  REQUIRE(e.servers.size() == 1);
  CHECK(e.servers[0].bytes_in == 0);
  CHECK(e.servers[0].transmission_s == 0);
  // per variable a ring all-reduce of 2 (2α_i + b/1e10) and an all-gather of 2 (α_i + b/2e10)
  CHECK(e.servers[0].local_s == Approx(4 * 3e-6 + 1.5 * kDenseBytes / 1e10));
  CHECK(e.exposed_sync_s > 0);
}

// ps_synchronizer.py's between_graph_apply returns early for sync = false: no accumulator and
// no token queues, so a node's update is applied on arrival and its next read follows its own
// push. The server's pushes in and pulls out then overlap: over k nodes a shard takes
// push + (k−1)·max(push, pull) + pull instead of k·(push + pull).
TEST_CASE("sync false changes the step: a node's pull follows its own push", "[sync][analytical]") {
  Graph g = test::tiny_model(false);
  std::vector<Variable> vars = extract_variables(g);
  ClusterSpec c = test::test_cluster(5, 1);
  SyncTimeline at_once;
  at_once.ready_s.assign(vars.size(), 0.0);
  Strategy s = built("ps", g, c);
  Evaluation sync = evaluate_analytical(vars, s, c, at_once);
  for (VarConfig& v : s.vars) v.parts[0].sync = false;
  Evaluation async = evaluate_analytical(vars, s, c, at_once);
  // 4 remote nodes: 8 messages of each variable one after another, against 5
  CHECK(sync.servers[0].transmission_s == Approx(8 * kDenseBytes / kB));
  CHECK(async.servers[0].transmission_s == Approx(5 * kDenseBytes / kB));
  CHECK(async.servers[0].overhead_s == Approx(4 * 5 * kAlpha));
  CHECK(async.iteration_s < sync.iteration_s);
  CHECK(async.iteration_s == Approx(5 * kDenseBytes / kB + 20 * kAlpha));
  // a positive staleness (with sync) applies each node's gradient on arrival too; within the
  // one step priced here its bound never binds
  for (VarConfig& v : s.vars) {
    v.parts[0].sync = true;
    v.parts[0].staleness = 3;
  }
  CHECK(evaluate_analytical(vars, s, c, at_once).iteration_s == Approx(async.iteration_s));
}

TEST_CASE("sparse gradients push only the touched rows and their indices", "[sync][analytical]") {
  Graph g = test::tiny_model(true);
  ClusterSpec c = test::test_cluster(4, 1);
  Evaluation e = run(g, c, built("ps", g, c));
  // emb.table: 32 ids over 4 workers -> 8 rows x (64 B + 8 B index) = 576 B per worker
  CHECK(e.servers[0].bytes_in == 3 * (kDenseBytes + 576));
}

TEST_CASE("all-reduce groups: ring α-β per group, max and sum over groups, fp16 halves bytes",
          "[sync][analytical]") {
  Graph g = test::tiny_model(false);
  ClusterSpec c = test::test_cluster(4, 1);
  Strategy s = built("all_reduce", g, c);
  for (VarConfig& v : s.vars) v.parts[0].algorithm = ArAlgorithm::ring;
  // ring all-reduce over p = 4: 2(p−1)α + 2(p−1)/p·S/B
  auto ring = [](double bytes) { return 6 * kAlpha + 1.5 * bytes / kB; };
  Evaluation one = run(g, c, s);
  REQUIRE(one.groups.size() == 1);
  CHECK(one.groups[0].members == 4);
  CHECK(one.groups[0].algorithm == "ring");
  CHECK(one.groups[0].time_s == Approx(ring(kDenseBytes)));
  CHECK(one.groups[0].overhead_s == Approx(6 * kAlpha));
  CHECK(one.groups[0].transmission_s == Approx(1.5 * kDenseBytes / kB));

  for (VarConfig& v : s.vars) v.parts[0].group = v.var.rfind("fc1", 0) == 0 ? 1 : 0;
  Evaluation two = run(g, c, s);
  REQUIRE(two.groups.size() == 2);
  CHECK(two.ar_max_s == Approx(ring(8320)));
  CHECK(two.ar_sum_s == Approx(ring(8320) + ring(1320)));
  CHECK(two.groups[0].group == 0);  // fc2's gradients are ready first

  for (VarConfig& v : s.vars) v.parts[0].compressor = Compressor::fp16;
  // half the bytes, plus the casts (compression.hpp; compression_test.cpp prices them)
  CHECK(run(g, c, s).ar_sum_s ==
        Approx(ring(4160) + ring(660) + fp16_cast_s(c.gpu, 8320) + fp16_cast_s(c.gpu, 1320)));

  SECTION("auto takes the faster model: tree, 2(⌈log2 4⌉α) + 2S/B, beats ring here") {
    Strategy a = built("all_reduce", g, c);
    Evaluation e = run(g, c, a);
    CHECK(e.groups[0].algorithm == "tree");
    CHECK(e.groups[0].time_s == Approx(2 * 2 * kAlpha + 2 * kDenseBytes / kB));
  }
}

TEST_CASE("transfers overlap the rest of backward, only the last group's is exposed",
          "[sync][analytical]") {
  Graph g = test::tiny_model(false);
  // a slow GPU (1e8 FLOP/s): fc1's backward (2 GEMMs of 2·8·64·32 FLOPs / 4 workers) takes
  // 164 us, longer than fc2's group (60 us + 1.98 us), which therefore hides behind it
  ClusterSpec c = test::test_cluster(4, 1, kB, kAlpha, 1e8);
  Strategy s = built("all_reduce", g, c);
  for (VarConfig& v : s.vars) {
    v.parts[0].algorithm = ArAlgorithm::ring;
    v.parts[0].group = v.var.rfind("fc1", 0) == 0 ? 1 : 0;
  }
  Evaluation e = run(g, c, s);
  CHECK(e.iteration_s == Approx(e.forward_s + std::max(e.backward_s, e.sync_end_s)));
  // fc1.weight's gradient is the last one ready (end of backward): its group starts there
  CHECK(e.groups[1].ready_s == Approx(e.backward_s));
  CHECK(e.groups[0].end_s < e.backward_s);
  CHECK(e.exposed_sync_s == Approx(6 * kAlpha + 1.5 * 8320 / kB));
}

TEST_CASE("one GPU needs no synchronization", "[sync][analytical]") {
  Graph g = test::tiny_model(true);
  ClusterSpec c = test::test_cluster(1, 1);
  Evaluation e = run(g, c, built("parallax", g, c));
  CHECK(e.sync_end_s == 0);
  CHECK(e.iteration_s == Approx(e.forward_s + e.backward_s));
}
