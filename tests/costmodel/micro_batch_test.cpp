// Micro-batching splits only batch-major data: GPT's position indices [seq] and the position
// lookup keep their shape in every micro-batch (the old rule cut them to seq/m), and a view or
// a pass with no work launches no kernel.
#include <catch2/catch.hpp>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/graph_json.hpp"
#include "autoddl/costmodel/zoo.hpp"

using namespace autoddl::costmodel;

namespace {
const Graph& gpt() {
  static const Graph g = build_zoo_model("gpt", parse_knob_list("layers=1,hidden=256,heads=4,seq=128,vocab=1024,batch=8"));
  return g;
}
int output_of(const Graph& g, const char* op) { return g.ops[g.find_op(op)].outputs[0]; }
}  // namespace

TEST_CASE("micro-batches divide batch-major tensors only", "[costmodel][micro-batch]") {
  const Graph& g = gpt();
  const int pos = output_of(g, "embeddings.position_lookup");
  const int tok = output_of(g, "embeddings.token_lookup");
  CHECK_FALSE(g.tensors[pos].batched);
  CHECK(g.tensors[tok].batched);
  CHECK(g.tensors[output_of(g, "embeddings.sum")].batched);  // token (b,s,h) + position (s,h)
  CHECK(micro_batch_shape(g.tensors[pos], 4) == Shape{128, 256});
  CHECK(micro_batch_shape(g.tensors[tok], 4) == Shape{2, 128, 256});
  const Op& lookup = g.ops[g.find_op("embeddings.position_lookup")];
  CHECK(micro_batch_work_share(g, lookup, 4) == 1);
  CHECK(micro_batch_work_share(g, g.ops[g.find_op("embeddings.token_lookup")], 4) == 0.25);
  // The position lookup runs its whole work in each of the 2 micro-batches.
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const CostReport m1 = evaluate(g, c, make_scheme("megatron:tp=1,pp=1,dp=8,mb=1", g, c, {}));
  const CostReport m2 = evaluate(g, c, make_scheme("megatron:tp=2,pp=1,dp=4,mb=1", g, c, {}));
  REQUIRE(m1.micro_batches == 1);
  REQUIRE(m2.micro_batches == 2);
  const int i = g.find_op("embeddings.position_lookup");
  CHECK(m2.per_op[i].compute_s > 1.5 * m1.per_op[i].compute_s);
}

TEST_CASE("batch-free inputs round-trip through graph JSON", "[costmodel][micro-batch]") {
  const Graph& g = gpt();
  const Graph back = graph_from_json(graph_to_json(g), "round trip");
  const int pos = back.find_tensor("positions");
  REQUIRE(pos >= 0);
  CHECK_FALSE(back.tensors[pos].batched);
  CHECK_FALSE(back.tensors[output_of(back, "embeddings.position_lookup")].batched);
}

TEST_CASE("views launch no kernel", "[costmodel][micro-batch]") {
  const Graph& g = gpt();
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const CostReport r = evaluate(g, c, make_scheme("dp", g, c, {}));
  CHECK(r.per_op[g.find_op("layer.0.attn.q.split")].compute_s == 0);  // a reshape
  CHECK(r.per_op[g.find_op("layer.0.attn.q")].compute_s > 0);
}
