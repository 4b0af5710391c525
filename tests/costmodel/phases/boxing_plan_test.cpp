// Pins evaluate()'s boxing plan (boxing_plan.hpp): every op's boxing and sends add up to the
// report's, a recomputed reader boxes its activations again in backward, a tensor is sent to
// another stage once however many ops read it there (its summed gradient once back), and every
// input but a graph input has its states resolved.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/boxing_plan.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/zoo.hpp"

using namespace autoddl::costmodel;

namespace {

Graph tiny_gpt() {
  return build_zoo_model("gpt", {{"layers", "4"}, {"hidden", "256"}, {"heads", "8"}, {"seq", "128"},
                                 {"vocab", "1024"}, {"batch", "16"}});
}

struct Planned {
  EvalFrame frame;
  std::vector<OpCompute> compute;
  std::unique_ptr<BoxingCache> cache;
  BoxingPlan boxing;
};

Planned plan_of(const Graph& g, const ClusterSpec& c, const Scheme& s) {
  Planned p;
  p.frame = make_eval_frame(g, c, s);
  p.compute = compute_phase(c.gpu, g, s, p.frame.op_stage, nullptr);
  p.cache = std::make_unique<BoxingCache>(p.frame.split.sbp_mesh);
  p.boxing = plan_boxing(g, s, p.frame, p.compute, *p.cache, nullptr);
  return p;
}

}  // namespace

TEST_CASE("the boxing plan's ops add up to the report's boxing and send/recv", "[costmodel][phases]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph g = tiny_gpt();
  for (const char* spec : {"megatron:tp=4,pp=2,dp=2,mb=4", "megatron:tp=4,pp=2,dp=2,mb=4,sg=1", "zero3", "dp"}) {
    const Scheme s = make_scheme(spec, g, c, {});
    const Planned p = plan_of(g, c, s);
    const CostReport r = evaluate(g, c, s);
    std::vector<double> fwd(p.frame.stages, 0), bwd(p.frame.stages, 0);
    double per_op = 0;
    for (size_t i = 0; i < g.ops.size(); ++i) {
      const OpBoxing& b = p.boxing.ops[i];
      per_op += s.micro_batches * (b.fwd_s + b.bwd_s + b.fwd_send_s + b.bwd_send_s);
      fwd[p.frame.op_stage[i]] += s.micro_batches * b.fwd_s;
      bwd[p.frame.op_stage[i]] += s.micro_batches * b.bwd_s;
    }
    for (const auto& [op, sec] : p.boxing.producer_gather_s) per_op += sec;
    double rows = 0;
    for (const OpCostRow& row : r.per_op) rows += row.boxing_s;
    INFO(spec);
    CHECK(rows == Approx(per_op).epsilon(1e-12));
    // The report's boxing is the slowest stage's.
    bool found = false;
    for (int st = 0; st < p.frame.stages; ++st) {
      found = found || (r.fwd_boxing_s == Approx(fwd[st]).epsilon(1e-12).margin(1e-15) &&
                        r.bwd_boxing_s == Approx(bwd[st]).epsilon(1e-12).margin(1e-15));
    }
    CHECK(found);
  }
}

TEST_CASE("a recomputed reader boxes its activation inputs again in backward", "[costmodel][phases]") {
  CHECK(forward_boxing_runs(false) == 1);
  CHECK(forward_boxing_runs(true) == 2);
  CHECK(param_gather_runs(false) == 1);
  CHECK(param_gather_runs(true) == 2);
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const Graph g = tiny_gpt();
  Scheme s = make_scheme("megatron:tp=8,pp=1,dp=1", g, c, {});
  const Planned none = plan_of(g, c, s);
  s.recompute = Recompute::full;
  const Planned full = plan_of(g, c, s);
  int again = 0;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    INFO(g.ops[i].name);
    CHECK(full.boxing.ops[i].fwd_s == none.boxing.ops[i].fwd_s);
    const double extra = full.compute[i].recompute ? none.boxing.ops[i].fwd_s : 0;  // tp: no parameter gathers
    CHECK(full.boxing.ops[i].bwd_s == Approx(none.boxing.ops[i].bwd_s + extra).epsilon(1e-12).margin(1e-18));
    again += extra > 0;
  }
  CHECK(again > 0);  // the row-parallel all-reduces of every layer
}

TEST_CASE("a tensor is sent once to each other stage that reads it, and its gradient once back",
          "[costmodel][phases]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph g = tiny_gpt();
  const Scheme s = make_scheme("megatron:tp=4,pp=2,dp=2,mb=4", g, c, {});
  const Planned p = plan_of(g, c, s);
  std::set<std::pair<int, int>> crossing;  // (tensor, reader stage)
  int with_gradient = 0;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      const Tensor& t = g.tensors[op.inputs[k]];
      const InputBoxing& in = p.boxing.input(static_cast<int>(i), static_cast<int>(k));
      if (t.producer < 0 && t.role != TensorRole::parameter) {
        CHECK(in.table == nullptr);
        continue;
      }
      REQUIRE(in.table != nullptr);
      CHECK(in.from >= 0);
      CHECK(in.to >= 0);
      if (t.role != TensorRole::parameter && p.frame.op_stage[t.producer] != p.frame.op_stage[i]) {
        with_gradient += crossing.insert({op.inputs[k], p.frame.op_stage[i]}).second && has_gradient(t);
      }
    }
  }
  REQUIRE(!crossing.empty());
  // One send forward per (tensor, reader stage), one back for its summed gradient; all on the
  // reading stage (stage 1).
  const CommTally& tally = p.boxing.stage_tally[1];
  CHECK(tally.count[static_cast<size_t>(CollectiveKind::send_recv)] ==
        static_cast<double>(crossing.size() + with_gradient));
  CHECK(p.boxing.stage_tally[0].count[static_cast<size_t>(CollectiveKind::send_recv)] == 0);
  // The send of one micro-batch's piece is α + bytes · β on the pipeline link.
  CHECK(stage_send_s(p.frame.split.tier, 1e6) ==
        p.frame.split.tier.alpha_s + 1e6 * p.frame.split.tier.beta_s_per_byte);
}

TEST_CASE("sequence parallelism gathers the LayerNorm outputs again for the weight gradients", "[costmodel][phases]") {
  // Megatron-LM keeps the LayerNorm outputs sequence-split and all-gathers them again in
  // backward before the QKV and FC1 weight gradients: per layer and micro-batch 2 all-gathers
  // forward, 2 backward (of the reduce-scattered outputs' gradients) and these 2: 6, not 4.
  // Launched before the data-gradient GEMMs, they hide under them up to their time.
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  auto gpt = [](int layers) {
    return build_zoo_model("gpt", {{"layers", std::to_string(layers)}, {"hidden", "1024"}, {"heads", "16"},
                                   {"seq", "1024"}, {"vocab", "1024"}, {"batch", "8"}});
  };
  const auto ag = static_cast<size_t>(CollectiveKind::all_gather);
  for (const char* recompute : {"none", "selective", "full"}) {
    INFO("recompute=" << recompute);
    const std::string spec = std::string("megatron:tp=8,pp=1,dp=1,sp=1,recompute=") + recompute;
    const Graph g2 = gpt(2), g3 = gpt(3);
    const CostReport r2 = evaluate(g2, c, make_scheme(spec, g2, c, {}));
    const CostReport r3 = evaluate(g3, c, make_scheme(spec, g3, c, {}));
    REQUIRE(r2.micro_batches == 1);
    // Full recompute re-runs the forward, gathers included: the same 6, counted there.
    CHECK(r3.comm.count[ag] - r2.comm.count[ag] == 6);
  }
  // Hidden under the data-gradient GEMMs (at a size where they take longer than the gather):
  // a layer's backward boxing is what it was with 4.
  const Graph g = build_zoo_model("gpt", {{"layers", "2"}, {"hidden", "8192"}, {"heads", "64"}, {"seq", "2048"},
                                          {"vocab", "1024"}, {"batch", "8"}});
  const Scheme s = make_scheme("megatron:tp=8,pp=1,dp=1,sp=1", g, c, {});
  const Planned p = plan_of(g, c, s);
  double regather_s = 0, hidden_under_s = 0;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    if (op.name != "layer.0.attn.q" && op.name != "layer.0.ffn.fc1") continue;
    const InputBoxing& in = p.boxing.input(static_cast<int>(i), 0);
    regather_s += in.table->time_s(in.from, in.to);
    hidden_under_s += (p.compute[i].bwd_s - p.compute[i].recompute_s) / 2;
    // Its backward boxing is its input gradient's reduce-scatter alone: the gather is hidden.
    CHECK(p.boxing.ops[i].bwd_s == Approx(in.table->time_s(in.grad, in.grad_to)));
  }
  CHECK(regather_s > 0);
  CHECK(regather_s < hidden_under_s);
}
