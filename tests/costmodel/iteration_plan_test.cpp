// The IterationPlan that evaluate() records is what it priced: summed the way evaluate() sums,
// its items reproduce the CostReport's compute, boxing, send/recv and collective counts, so a
// replay of the plan (sim/'s lowering) executes exactly the analytical model's iteration.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/zoo.hpp"

using namespace autoddl::costmodel;

namespace {
struct Sums {
  double compute_s = 0, boxing_s = 0, send_s = 0;
  CommTally comm;
};

Sums stage_sums(const IterationPlan& p, int stage) {
  Sums s;
  // Scatter/gather: a received gradient is all-gathered on the producer's stage.
  for (const PlannedOp& op : p.ops) {
    for (const PlannedInput& in : op.inputs) {
      if (in.producer < 0 || p.ops[static_cast<size_t>(in.producer)].stage != stage) continue;
      for (const BoxingStep& st : in.bwd_send_gather) {
        s.send_s += st.time_s;
        s.comm.add(st.kind, st.time_s, st.wire_bytes);
      }
    }
  }
  for (const PlannedOp& op : p.ops) {
    if (op.stage != stage) continue;
    s.compute_s += op.fwd_s + op.bwd_s + op.recompute_s;
    for (const PlannedInput& in : op.inputs) {
      for (const BoxingStep& st : in.fwd) {
        s.boxing_s += st.time_s;
        s.comm.add(st.kind, st.time_s, st.wire_bytes);
      }
      for (const BoxingStep& st : in.bwd) {
        s.boxing_s += st.time_s;
        s.comm.add(st.kind, st.time_s, st.wire_bytes);
      }
      // A recomputed op re-runs its forward, boxing of its activation inputs included.
      if (op.recompute && in.role == InputRole::activation) {
        for (const BoxingStep& st : in.fwd) {
          s.boxing_s += st.time_s;
          s.comm.add(st.kind, st.time_s, st.wire_bytes);
        }
      }
      if (in.cross_stage) {
        s.send_s += in.fwd_send_s + in.bwd_send_s;
        s.comm.add(CollectiveKind::send_recv, in.fwd_send_s, in.fwd_send_bytes);
        if (in.bwd_send) s.comm.add(CollectiveKind::send_recv, in.bwd_send_s, in.bwd_send_bytes);
        for (const BoxingStep& st : in.fwd_send_gather) {
          s.send_s += st.time_s;
          s.comm.add(st.kind, st.time_s, st.wire_bytes);
        }
      }
    }
  }
  return s;
}
}  // namespace

TEST_CASE("an IterationPlan's items add up to the CostReport of the same scheme", "[costmodel][plan]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph gpt = build_zoo_model("gpt", parse_knob_list("layers=4,heads=16,batch=32"));
  for (const std::string spec : {"dp", "zero1", "zero3", "megatron:tp=8,pp=1,dp=2", "megatron:tp=4,pp=2,dp=2,mb=2",
                                 "megatron:tp=2,pp=2,dp=4,interleave=2,recompute=full"}) {
    INFO(spec);
    const Scheme s = make_scheme(spec, gpt, c, {});
    IterationPlan p;
    const CostReport r = evaluate(gpt, c, s, &p);
    REQUIRE(p.ops.size() == gpt.ops.size());
    REQUIRE(p.stages == r.stages);
    REQUIRE(p.micro_batches == r.micro_batches);
    // The slowest stage is the one whose per-micro-batch sum is the report's stage time.
    int slow = 0;
    double slowest = -1;
    for (int st = 0; st < p.stages; ++st) {
      const Sums x = stage_sums(p, st);
      const double t = x.compute_s + x.boxing_s + x.send_s;
      if (t > slowest) {
        slowest = t;
        slow = st;
      }
    }
    CHECK(slowest == Approx(r.stage_time_s).epsilon(1e-9));
    const Sums x = stage_sums(p, slow);
    const double m = p.micro_batches;
    const double opt = *std::max_element(p.optimizer_s.begin(), p.optimizer_s.end());
    CHECK(m * x.compute_s + opt + p.grad_sync_contention_s == Approx(r.compute_s).epsilon(1e-9));
    CHECK(m * x.boxing_s == Approx(r.fwd_boxing_s + r.bwd_boxing_s).epsilon(1e-9).margin(1e-15));
    CHECK(m * x.send_s == Approx(r.send_recv_s).epsilon(1e-9).margin(1e-15));
    CommTally total = x.comm.scaled(m);
    double sync_s = 0;
    for (const PlannedBucket& b : p.buckets[static_cast<size_t>(slow)]) {
      REQUIRE_FALSE(b.grads.empty());
      for (const BoxingStep& st : b.steps) {
        total.add(st.kind, st.time_s, st.wire_bytes);
        sync_s += st.time_s;
      }
    }
    // The report's sync time is the longest stage's: the first stage also syncs the position
    // table, so it need not be the slow stage's.
    double longest_sync_s = 0;
    for (const auto& stage_buckets : p.buckets) {
      double stage_s = 0;
      for (const PlannedBucket& b : stage_buckets) {
        for (const BoxingStep& st : b.steps) stage_s += st.time_s;
      }
      longest_sync_s = std::max(longest_sync_s, stage_s);
    }
    CHECK(sync_s <= longest_sync_s);
    CHECK(longest_sync_s == Approx(r.grad_sync_s).epsilon(1e-9).margin(1e-15));
    // ZeRO-1's all-gathers of the updated shards run after the optimizer step.
    for (const PlannedBucket& b : p.param_gathers[static_cast<size_t>(slow)]) {
      for (const BoxingStep& st : b.steps) total.add(st.kind, st.time_s, st.wire_bytes);
    }
    for (const CollectiveInfo& k : collective_kinds()) {
      const auto i = static_cast<size_t>(k.kind);
      INFO(k.name);
      CHECK(total.count[i] == Approx(r.comm.count[i]));
      CHECK(total.bytes[i] == Approx(r.comm.bytes[i]).epsilon(1e-9).margin(1e-6));
    }
  }
}

TEST_CASE("every parameter gradient of a stage is synced in exactly one bucket", "[costmodel][plan]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph bert = build_zoo_model("bert", parse_knob_list("layers=4,batch=32"));
  for (const std::string spec : {"dp", "zero1", "megatron:tp=4,pp=2,dp=2"}) {
    INFO(spec);
    const Scheme s = make_scheme(spec, bert, c, {});
    IterationPlan p;
    evaluate(bert, c, s, &p);
    for (int st = 0; st < p.stages; ++st) {
      std::vector<int> seen;
      for (const PlannedBucket& b : p.buckets[static_cast<size_t>(st)])
        for (const PlannedGradient& g : b.grads) {
          CHECK(p.ops[static_cast<size_t>(g.op)].stage == st);
          seen.push_back(g.tensor);
        }
      std::sort(seen.begin(), seen.end());
      CHECK(std::adjacent_find(seen.begin(), seen.end()) == seen.end());
      std::vector<int> read;  // parameters read on this stage
      for (size_t i = 0; i < bert.ops.size(); ++i)
        for (const PlannedInput& in : p.ops[i].inputs)
          if (in.role == InputRole::parameter && p.ops[i].stage == st) read.push_back(in.tensor);
      std::sort(read.begin(), read.end());
      read.erase(std::unique(read.begin(), read.end()), read.end());
      // A gradient already in its storage SBP (e.g. of an op not split on a dim) needs none.
      CHECK(seen.size() <= read.size());
      CHECK(!seen.empty());
    }
  }
}
