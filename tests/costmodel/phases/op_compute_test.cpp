// Pins evaluate()'s compute phase (op_compute.hpp): an op's kernels run on its micro-batch share
// after the signature's split, recompute charges the forward again to backward on exactly the
// ops its mode re-runs, and the per-op rows of evaluate() are m times these.
#include <catch2/catch.hpp>

#include "autoddl/costmodel/compute.hpp"
#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/zoo.hpp"

using namespace autoddl::costmodel;

namespace {

Graph tiny_gpt() {
  return build_zoo_model("gpt", {{"layers", "2"}, {"hidden", "256"}, {"heads", "8"}, {"seq", "128"},
                                 {"vocab", "1024"}, {"batch", "16"}});
}

}  // namespace

TEST_CASE("an op computes its micro-batch share of the work split by its signature", "[costmodel][phases]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const Graph g = tiny_gpt();
  const Scheme s = make_scheme("megatron:tp=4,pp=1,dp=2", g, c, {});
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    const OpSignature& sig = s.op_sigs[i];
    const OpCompute one = op_compute(c.gpu, g, op, sig, 1, Recompute::none);
    const OpTimes kt = op_kernel_times(c.gpu, g, op, 1.0 / sig.compute_split);
    INFO(op.name);
    CHECK(one.fwd_s == kt.fwd_s);
    CHECK(one.bwd_s == kt.bwd_s);
    CHECK(one.recompute_s == 0);
    CHECK_FALSE(one.recompute);
    const OpCompute four = op_compute(c.gpu, g, op, sig, 4, Recompute::none);
    const OpTimes kt4 = op_kernel_times(c.gpu, g, op, micro_batch_work_share(g, op, 4) / sig.compute_split);
    CHECK(four.fwd_s == kt4.fwd_s);
  }
}

TEST_CASE("recompute re-runs the forward before backward on the ops its mode names", "[costmodel][phases]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const Graph g = tiny_gpt();
  const Scheme s = make_scheme("megatron:tp=2,pp=1,dp=4", g, c, {});
  int selective = 0, full = 0;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    const OpCompute none = op_compute(c.gpu, g, op, s.op_sigs[i], 2, Recompute::none);
    for (Recompute mode : {Recompute::selective, Recompute::full}) {
      const OpCompute rc = op_compute(c.gpu, g, op, s.op_sigs[i], 2, mode);
      INFO(op.name << " " << recompute_name(mode));
      CHECK(rc.recompute == recomputed(g, op, mode));
      CHECK(rc.fwd_s == none.fwd_s);
      CHECK(rc.recompute_s == (rc.recompute ? none.fwd_s : 0));
      CHECK(rc.bwd_s == none.bwd_s + rc.recompute_s);
      (mode == Recompute::selective ? selective : full) += rc.recompute;
    }
    CHECK((!recomputed(g, op, Recompute::selective) || is_attention_core(g, op)));
    CHECK(recomputed(g, op, Recompute::full) == !op.block.empty());
  }
  CHECK(selective > 0);
  CHECK(full > selective);
}

TEST_CASE("evaluate's per-op compute is m times the compute phase, recorded in the plan", "[costmodel][phases]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph g = tiny_gpt();
  Scheme s = make_scheme("megatron:tp=4,pp=2,dp=2,mb=4", g, c, {});
  s.recompute = Recompute::selective;
  const EvalFrame f = make_eval_frame(g, c, s);
  IterationPlan plan;
  const CostReport r = evaluate(g, c, s, &plan);
  const std::vector<OpCompute> ph = compute_phase(c.gpu, g, s, f.op_stage, nullptr);
  REQUIRE(ph.size() == g.ops.size());
  for (size_t i = 0; i < g.ops.size(); ++i) {
    INFO(g.ops[i].name);
    CHECK(r.per_op[i].compute_s == s.micro_batches * (ph[i].fwd_s + ph[i].bwd_s));
    CHECK(plan.ops[i].fwd_s == ph[i].fwd_s);
    CHECK(plan.ops[i].recompute_s == ph[i].recompute_s);
    CHECK(plan.ops[i].stage == f.op_stage[i]);
  }
}
