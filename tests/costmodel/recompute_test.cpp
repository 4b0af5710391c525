// Recompute as Megatron-LM runs it: full recompute re-runs each transformer layer's forward
// from its checkpointed input, tensor-parallel all-reduces included (the checkpointed
// RowParallelLinear all-reduces again), and never re-runs what lies outside the layers
// (embeddings, final norm, LM head, loss).
#include <catch2/catch.hpp>

#include <string>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/zoo.hpp"

using namespace autoddl::costmodel;

namespace {
CostReport cost(const Graph& g, const std::string& recompute) {
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  return evaluate(g, c, make_scheme("megatron:tp=8,pp=1,dp=1,mb=1,recompute=" + recompute, g, c, {}));
}

double per_op_compute(const CostReport& r, const std::string& op) {
  for (const auto& row : r.per_op) {
    if (row.op == op) return row.compute_s;
  }
  FAIL("no op " << op);
  return 0;
}
}  // namespace

TEST_CASE("full recompute re-runs each layer's forward all-reduces, nothing outside the layers",
          "[costmodel][recompute]") {
  const Graph g = build_zoo_model("gpt", parse_knob_list("layers=4,hidden=4096,heads=32,seq=2048,batch=8,vocab=51200"));
  const CostReport none = cost(g, "none"), full = cost(g, "full");
  const int layers = 4, micro_batches = 8;
  REQUIRE(none.micro_batches == micro_batches);
  const auto ar = static_cast<size_t>(CollectiveKind::all_reduce);
  // Per layer and micro-batch: 2 forward + 2 backward all-reduces, and 2 more when the forward
  // re-runs; plus the vocab-parallel embedding's and the LM head's input-gradient all-reduce.
  CHECK(none.comm.count[ar] == micro_batches * (4 * layers + 2));
  CHECK(full.comm.count[ar] == micro_batches * (6 * layers + 2));
  // Outside the layers nothing is recomputed; inside, backward grows by one forward.
  for (const char* op : {"lm_head", "ln_f", "loss", "embeddings.token_lookup"}) {
    INFO(op);
    CHECK(per_op_compute(full, op) == Approx(per_op_compute(none, op)));
  }
  CHECK(per_op_compute(full, "layer.0.ffn.fc1") > 1.3 * per_op_compute(none, "layer.0.ffn.fc1"));
}

TEST_CASE("selective recompute re-runs only the attention core", "[costmodel][recompute]") {
  const Graph g = build_zoo_model("gpt", parse_knob_list("layers=2,hidden=1024,heads=16,seq=1024,batch=8"));
  const CostReport none = cost(g, "none"), sel = cost(g, "selective");
  CHECK(per_op_compute(sel, "layer.0.attn.softmax") > per_op_compute(none, "layer.0.attn.softmax"));
  CHECK(per_op_compute(sel, "layer.0.attn.q") == Approx(per_op_compute(none, "layer.0.attn.q")));
  const auto ar = static_cast<size_t>(CollectiveKind::all_reduce);
  CHECK(sel.comm.count[ar] == none.comm.count[ar]);  // the core needs no tensor-parallel collective
}
