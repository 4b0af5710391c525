// Pins evaluate()'s gradient buckets (grad_buckets.hpp): gradients whose syncs are the same
// collectives fuse into buckets of at least bucket_bytes, a bucket starts when its last gradient
// is ready and the previous one is done, only what runs past the backward is exposed, and ZeRO-1
// reduce-scatters into the shard its replica updates.
#include <catch2/catch.hpp>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/zoo.hpp"
#include "run_phases.hpp"

using namespace autoddl::costmodel;

namespace {

NdSbp one(Sbp s) { return NdSbp::all(s, 1); }

}  // namespace

TEST_CASE("gradients fuse into buckets that overlap the backward, only the tail is exposed", "[costmodel][phases]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const DeviceMesh mesh = make_mesh(c, {8});
  const BoxingTable table(mesh, {1024, 1024}, 2.0 * 1024 * 1024);
  const int p = table.index_of(one(Sbp::partial())), b = table.index_of(one(Sbp::broadcast()));
  REQUIRE(p >= 0);
  REQUIRE(b >= 0);
  const double bytes = 2.0 * 1024 * 1024;
  const std::vector<GradSync> grads = {{0, 0, p, b, &table, bytes, 1e-3},
                                       {1, 1, p, b, &table, bytes, 2e-3},
                                       {2, 2, p, b, &table, bytes, 3e-3}};
  // A bucket runs the path's steps once on the summed bytes.
  const std::vector<BoxingStep> path = table.path(p, b);
  REQUIRE(!path.empty());
  auto bucket_s = [&](double n) {
    double t = 0;
    for (const BoxingStep& st : path) t += mesh.collective_time_s(st.dim, st.kind, n * st.bytes);
    return t;
  };
  const double one_s = bucket_s(1);
  struct Synced {
    double exposed_s = 0, total_s = 0;
    CommTally tally;
    std::vector<PlannedBucket> planned;
  };
  auto sync = [&](const std::vector<GradSync>& gs, double bucket_bytes, double backward_end_s) {
    Synced r;
    r.exposed_s = sync_buckets(gs, bucket_bytes, backward_end_s, mesh, r.tally, r.total_s, &r.planned);
    return r;
  };

  SECTION("one gradient per bucket: each starts when ready or when the previous ends") {
    const Synced r = sync(grads, 1, 3e-3);
    CHECK(r.planned.size() == 3);
    CHECK(r.total_s == Approx(3 * one_s));
    double free_at = 0;
    for (double ready : {1e-3, 2e-3, 3e-3}) free_at = std::max(ready, free_at) + one_s;
    CHECK(r.exposed_s == Approx(free_at - 3e-3));
    double count = 0;
    for (double n : r.tally.count) count += n;
    CHECK(count == 3.0 * path.size());
  }
  SECTION("a large bucket fuses all three and waits for the last") {
    const Synced r = sync(grads, 1e12, 3e-3);
    REQUIRE(r.planned.size() == 1);
    CHECK(r.planned[0].grads.size() == 3);
    CHECK(r.total_s == Approx(bucket_s(3)));
    CHECK(r.exposed_s == Approx(bucket_s(3)));
  }
  SECTION("a gradient already in its storage SBP syncs nothing and closes the bucket") {
    std::vector<GradSync> with_free = grads;
    with_free.insert(with_free.begin() + 2, GradSync{3, 3, b, b, &table, bytes, 2.5e-3});
    const Synced r = sync(with_free, 1e12, 3e-3);
    REQUIRE(r.planned.size() == 2);
    CHECK(r.planned[0].grads.size() == 2);
    CHECK(r.planned[1].grads.size() == 1);
    CHECK(r.total_s == Approx(bucket_s(2) + bucket_s(1)));
  }
  SECTION("a sync that ends before the backward is hidden") {
    const Synced r = sync(grads, 1, 1.0);
    CHECK(r.exposed_s == 0);
    CHECK(r.total_s > 0);
  }
}

TEST_CASE("a sharded optimizer syncs into the shard its replica updates, then gathers it back",
          "[costmodel][phases]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const DeviceMesh mesh = make_mesh(c, {8});
  const Shape shape{1024, 256};
  const BoxingTable table(mesh, shape, 2.0 * 1024 * 256);
  const int p = table.index_of(one(Sbp::partial())), b = table.index_of(one(Sbp::broadcast()));
  const int s0 = table.index_of(one(Sbp::split(0)));
  const GradSyncStates plain = grad_sync_states(table, p, b, false, {8}, shape);
  CHECK(plain.from == p);
  CHECK(plain.to == b);
  CHECK(plain.storage == b);
  const GradSyncStates sharded = grad_sync_states(table, p, b, true, {8}, shape);
  CHECK(sharded.to == s0);  // reduce-scatter P → S(0), all-gather S(0) → B after the step
  CHECK(sharded.storage == b);
  CHECK(optimizer_shard_state(table, one(Sbp::broadcast()), {8}, shape) == s0);
  // Already split: nothing replicated to shard.
  CHECK(grad_sync_states(table, p, s0, true, {8}, shape).to == s0);
}

TEST_CASE("evaluate's gradient sync is the bucket phase's, per op and exposed", "[costmodel][phases]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph g = build_zoo_model("gpt", {{"layers", "2"}, {"hidden", "256"}, {"heads", "8"}, {"seq", "128"},
                                          {"vocab", "1024"}, {"batch", "16"}});
  for (const char* spec : {"dp", "zero1", "megatron:tp=4,pp=2,dp=2,mb=4,dist_opt=1"}) {
    const Scheme s = make_scheme(spec, g, c, {});
    const RunPhases p(g, c, s);
    const GradSyncPhase& sync = p.sync;
    const CostReport r = evaluate(g, c, s);
    INFO(spec);
    CHECK(r.grad_sync_s == sync.total_s);
    CHECK(r.grad_sync_exposed_s == sync.exposed_s);
    CHECK(sync.total_s > 0);
    for (size_t i = 0; i < g.ops.size(); ++i) CHECK(r.per_op[i].grad_sync_s == sync.op_sync_s[i]);
    const bool sharded = s.shard_optimizer;
    double gathers = 0;
    for (double x : sync.param_gather_s) gathers += x;
    CHECK((gathers > 0) == sharded);
  }
}

TEST_CASE("every parameter's gradient is synced in a bucket: the position tables' too", "[costmodel][phases]") {
  // GPT's and BERT's position lookups read batch-free positions, so their output is replicated on
  // a data-parallel dim while its reader sums the gradient over the batch shards. Megatron-LM
  // accumulates that partial sum into the table's gradient and reduces it with the others, once
  // per iteration; it is not all-reduced as an activation gradient per micro-batch.
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  for (const char* model : {"gpt", "bert"}) {
    const Graph g = build_zoo_model(model, {{"layers", "2"}, {"hidden", "256"}, {"heads", "8"}, {"seq", "128"},
                                            {"vocab", "1024"}, {"batch", "32"}});
    for (const char* spec : {"dp", "megatron:tp=2,pp=1,dp=8,mb=2", "megatron:tp=2,pp=2,dp=4,mb=2"}) {
      INFO(model << " " << spec);
      const Scheme s = make_scheme(spec, g, c, {});
      IterationPlan plan;
      evaluate(g, c, s, &plan);
      // Once on each stage that reads it (a tied table's two copies, on the first and last).
      std::vector<int> synced(g.tensors.size(), 0), stages_reading(g.tensors.size(), 0);
      for (const auto& stage : plan.buckets) {
        for (const PlannedBucket& b : stage) {
          for (const PlannedGradient& gr : b.grads) ++synced[static_cast<size_t>(gr.tensor)];
        }
      }
      for (int st = 0; st < plan.stages; ++st) {
        std::vector<char> reads(g.tensors.size(), 0);
        for (size_t i = 0; i < g.ops.size(); ++i) {
          if (plan.ops[i].stage != st) continue;
          for (int t : g.ops[i].inputs) reads[static_cast<size_t>(t)] = 1;
        }
        for (size_t t = 0; t < g.tensors.size(); ++t) stages_reading[t] += reads[t];
      }
      for (size_t t = 0; t < g.tensors.size(); ++t) {
        if (g.tensors[t].role != TensorRole::parameter) continue;
        INFO(g.tensors[t].name);
        CHECK(synced[t] >= 1);
        CHECK(synced[t] == stages_reading[t]);
      }
      const int lookup = g.find_op("embeddings.position_lookup");
      REQUIRE(lookup >= 0);
      const int sum = g.consumers[g.ops[static_cast<size_t>(lookup)].outputs[0]].front();
      for (const PlannedInput& in : plan.ops[static_cast<size_t>(sum)].inputs) {
        if (in.producer == lookup) CHECK(in.bwd.empty());
      }
    }
  }
}
