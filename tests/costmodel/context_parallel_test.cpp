// Context parallelism in the megatron scheme (Megatron-Core's --context-parallel-size and
// --cp-comm-type): tokens split over the sequence on a cp mesh dim between dp and tp, fused
// attention reading sequence-split queries against gathered keys and values (the KV exchange),
// gradients synced over dp x cp, activations divided by cp; the p2p ring hides the exchange under
// attention, all_gather does not; each bad combination is refused naming the parameter.
#include <catch2/catch.hpp>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/iteration_plan.hpp"
#include "autoddl/costmodel/scheme_export.hpp"
#include "autoddl/costmodel/zoo.hpp"
#include "input_error.hpp"
#include "scheme_lookup.hpp"

using namespace autoddl::costmodel;

namespace {
// Llama 3 8B's layer shapes, 2 layers.
Graph llama(int64_t seq, const std::string& extra = "", int batch = 8) {
  return build_zoo_model("llama", parse_knob_list("size=3-8b,layers=2,batch=" + std::to_string(batch) +
                                                  ",seq=" + std::to_string(seq) + extra));
}
}  // namespace

TEST_CASE("cp=2 splits the sequence on a mesh dim between dp and tp and gathers K and V into attention",
          "[costmodel][cp]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 1);
  const Graph g = llama(8192);
  const Scheme s = make_scheme("megatron:tp=2,pp=1,dp=2,cp=2,sp=1", g, c, {});
  REQUIRE(s.mesh_shape == std::vector<int>{2, 2, 2});  // [dp, cp, tp]
  CHECK(s.overlap_cp_comm);                            // p2p is Megatron-Core's default
  const OpSignature& core = sig_of(g, s, "layer.0.attn.core");
  CHECK(core.in[0].dims[1] == Sbp::split(2));  // queries (b, heads, seq, d): sequence-split
  CHECK(core.in[1].dims[1] == Sbp::broadcast());
  CHECK(core.in[2].dims[1] == Sbp::broadcast());
  CHECK(core.out[0].dims[1] == Sbp::split(2));
  CHECK(core.in[0].dims[2] == Sbp::split(1));  // heads still split over tp
  CHECK(sig_of(g, s, "embeddings.token_lookup").in[1].dims[1] == Sbp::split(1));  // tokens (b, seq)
  // A weight is replicated over cp and its gradient is a partial sum there: synced over dp x cp.
  const OpSignature& q = sig_of(g, s, "layer.0.attn.q");
  CHECK(q.in[1].dims[1] == Sbp::broadcast());
  CHECK(q.in_grad[1].dims[1].is_partial());
}

TEST_CASE("the KV exchange gathers K and V over cp forward and again backward and reduce-scatters their gradients",
          "[costmodel][cp]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 1);
  const Graph g = llama(8192);
  // Same tp, sp and data-parallel group size (dp x cp = 4), one micro-batch each.
  const CostReport plain = evaluate(g, c, make_scheme("megatron:tp=2,pp=1,dp=4,sp=1", g, c, {}));
  const CostReport ag = evaluate(g, c, make_scheme("megatron:tp=2,pp=1,dp=2,cp=2,sp=1,cp_comm_type=all_gather", g, c, {}));
  const CostReport ring = evaluate(g, c, make_scheme("megatron:tp=2,pp=1,dp=2,cp=2,sp=1", g, c, {}));
  REQUIRE(plain.micro_batches == 1);
  REQUIRE(ag.micro_batches == 1);
  CHECK(ring.comm.count == ag.comm.count);  // the ring moves what the all-gather moves
  // Each attention's K and V: all-gathered over cp (dim 1 of [dp, cp, tp]) forward and again for
  // backward, their gradients reduce-scattered back. The gathered K of one micro-batch on one
  // GPU: 4 samples x 4 of the 8 KV heads (tp=2) x 8192 tokens x 128 x 2 bytes.
  IterationPlan plan;
  evaluate(g, c, make_scheme("megatron:tp=2,pp=1,dp=2,cp=2,sp=1,cp_comm_type=all_gather", g, c, {}), &plan);
  const double gathered_bytes = 4.0 * 4 * 8192 * 128 * 2;
  for (const char* layer : {"layer.0", "layer.1"}) {
    const PlannedOp& core = plan.ops[g.find_op(std::string(layer) + ".attn.core")];
    for (int k : {1, 2}) {
      const PlannedInput& in = core.inputs[k];
      REQUIRE(in.fwd.size() == 1);
      CHECK(in.fwd[0].kind == CollectiveKind::all_gather);
      CHECK(in.fwd[0].dim == 1);
      CHECK(in.fwd[0].bytes == Approx(gathered_bytes));
      REQUIRE(in.bwd_regather.size() == 1);
      CHECK(in.bwd_regather[0].kind == CollectiveKind::all_gather);
      REQUIRE(in.bwd.size() == 1);
      CHECK(in.bwd[0].kind == CollectiveKind::reduce_scatter);
      CHECK(in.bwd[0].dim == 1);
    }
  }
  // The gradient sync spans dp x cp. It is priced over the two mesh dims, not as Megatron's one
  // flattened dp x cp group: within 2% of dp=4's here.
  CHECK(ag.grad_sync_s == Approx(plain.grad_sync_s).epsilon(0.02));
  // all_gather: the whole exchange is exposed; the ring hides it under attention.
  CHECK(ag.context_parallel_s > 0);
  CHECK(ag.context_parallel_exposed_s == Approx(ag.context_parallel_s));
  CHECK(ring.context_parallel_s == Approx(ag.context_parallel_s));
  CHECK(ring.context_parallel_exposed_s < ring.context_parallel_s);
  CHECK(ring.iteration_s < ag.iteration_s);
  CHECK(plain.context_parallel_s == 0);
}

TEST_CASE("the p2p ring hides the KV exchange only up to the attention's compute", "[costmodel][cp]") {
  // At 32k tokens attention's s² work dwarfs the linear-in-s exchange: all hidden. With few
  // tokens the exchange is mostly latency and outlasts (cp-1)/cp of a short attention.
  const ClusterSpec c = resolve_cluster("dgx-h100", 2);
  const Graph longg = llama(32768, "", 4);
  const CostReport l = evaluate(longg, c, make_scheme("megatron:tp=1,pp=1,dp=1,cp=16", longg, c, {}));
  CHECK(l.context_parallel_s > 0);
  CHECK(l.context_parallel_exposed_s == 0);
  const Graph shortg = llama(256, "", 4);
  const CostReport sh = evaluate(shortg, c, make_scheme("megatron:tp=1,pp=1,dp=1,cp=16", shortg, c, {}));
  CHECK(sh.context_parallel_exposed_s > 0);
  CHECK(sh.context_parallel_exposed_s < sh.context_parallel_s);
}

TEST_CASE("cp divides the activations it splits by cp", "[costmodel][cp]") {
  const Graph g = llama(8192);
  const ClusterSpec one = resolve_cluster("dgx-h100", 1), two = resolve_cluster("dgx-h100", 2);
  const CostReport a = evaluate(g, one, make_scheme("megatron:tp=2,pp=1,dp=4,mb=2,sp=1", g, one, {}));
  const CostReport b = evaluate(g, two, make_scheme("megatron:tp=2,pp=1,dp=4,cp=2,mb=2,sp=1", g, two, {}));
  // K and V are kept as their sequence shards (gathered again for backward), so every saved
  // activation halves; parameters do not.
  CHECK(b.activation_memory_bytes == Approx(a.activation_memory_bytes / 2).epsilon(0.01));
  CHECK(b.param_memory_bytes == Approx(a.param_memory_bytes).epsilon(1e-9));
}

TEST_CASE("a context-parallel layout exports as Megatron-LM's and Megatron-Bridge's cp settings", "[costmodel][cp]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 1);
  const Graph g = llama(8192);
  for (const char* type : {"p2p", "all_gather"}) {
    const Scheme s =
        make_scheme(std::string("megatron:tp=2,pp=1,dp=2,cp=2,sp=1,cp_comm_type=") + type, g, c, {});
    const std::string lm = export_scheme(find_export_format("megatron-lm"), g, c, s);
    CHECK(lm.find("--context-parallel-size 2\n") != std::string::npos);
    CHECK(lm.find(std::string("--cp-comm-type ") + type + "\n") != std::string::npos);
    const std::string bridge = export_scheme(find_export_format("megatron-bridge"), g, c, s);
    CHECK(bridge.find("cfg.model.context_parallel_size = 2\n") != std::string::npos);
    CHECK(bridge.find(std::string("cfg.model.cp_comm_type = \"") + type + "\"\n") != std::string::npos);
  }
}

TEST_CASE("context parallelism refuses what Megatron-Core refuses or autoddl does not model", "[costmodel][cp]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 1);
  auto field_of = [&](const Graph& g, const std::string& spec) {
    const auto e = input_error_of([&] { make_scheme(spec, g, c, {}); });
    REQUIRE(e);
    return e->field();
  };
  // Causal load balancing gives each of the 2·cp chunks seq / (2·cp) tokens.
  CHECK(field_of(llama(8190), "megatron:tp=1,pp=1,dp=4,cp=2") == "cp");
  CHECK(field_of(llama(8192, ",flash=0"), "megatron:tp=1,pp=1,dp=4,cp=2") == "cp");
  CHECK(field_of(llama(8192), "megatron:tp=1,pp=1,dp=4,cp=2,cp_comm_type=a2a") == "cp_comm_type");
  CHECK(field_of(llama(8192), "megatron:tp=1,pp=1,dp=4,cp=2,cp_comm_type=ring") == "cp_comm_type");
  CHECK(field_of(llama(8192), "megatron:tp=1,pp=1,dp=8,cp_comm_type=p2p") == "cp_comm_type");
  const Graph moe = build_zoo_model("mixtral-8x7b", parse_knob_list("layers=2,batch=8"));
  CHECK(field_of(moe, "megatron:tp=1,pp=1,dp=4,cp=2") == "cp");
  CHECK(field_of(llama(8192), "megatron:tp=2,pp=1,dp=2,cp=3") == "megatron");  // 12 GPUs, not 8
}

TEST_CASE("Llama 3.1 405B's published 1024-H100 layout with cp=2 fits and reports its KV exchange",
          "[costmodel][cp]") {
  // TP8 PP8 CP2 VP8 at sequence 8192 (NVIDIA's NeMo Llama 3.1 405B pretraining recipe; issue 30):
  // 126 layers over 64 virtual stages as Megatron-Core places them with the embedding and loss
  // counted as layers (account_for_embedding/loss_in_pipeline_split).
  const ClusterSpec c = resolve_cluster("dgx-h100", 128);
  const Graph g = build_zoo_model("llama", parse_knob_list("size=3-405b,seq=8192,batch=512"));
  const Scheme s = make_scheme(
      "megatron:tp=8,pp=8,cp=2,dp=8,mb=1,sp=1,dist_opt=1,tp_overlap=1,pp_overlap=1,layout=Et|(tt|)*62tL", g, c, {});
  const CostReport r = evaluate(g, c, s);
  CHECK(r.feasible);
  CHECK(r.context_parallel_s > 0);
  CHECK(r.context_parallel_exposed_s <= r.context_parallel_s);
}

TEST_CASE("cp on GPT splits the sequence and slices the learned position embedding into it",
          "[costmodel][cp]") {
  // GPT looks its position embedding up whole (the position indices carry no batch); the
  // sequence-split stream reads it sliced for free. Before, the lowering could not, and the cp
  // dim turned into a second tensor-parallel dim: weights split, activations whole
  // (found by the CPU executor, docs/executor.md).
  const ClusterSpec c = resolve_cluster("dgx-h100", 1);
  const Graph g = build_zoo_model("gpt", parse_knob_list("layers=2,flash=1,seq=1024,batch=8"));
  const Scheme s = make_scheme("megatron:tp=2,pp=1,dp=2,cp=2", g, c, {});
  REQUIRE(s.mesh_shape == std::vector<int>{2, 2, 2});  // [dp, cp, tp]
  CHECK(sig_of(g, s, "embeddings.sum").in[1].dims[1] == Sbp::split(0));  // (seq, h) sliced
  CHECK(sig_of(g, s, "embeddings.sum").out[0].dims[1] == Sbp::split(1));
  CHECK(sig_of(g, s, "layer.0.ln1").in[0].dims[1] == Sbp::split(1));
  const OpSignature& q = sig_of(g, s, "layer.0.attn.q");
  CHECK(q.in[1].dims[1] == Sbp::broadcast());  // the weight is whole on the cp dim
  CHECK(q.in[1].dims[2] == Sbp::split(1));     // and column-split on tp
  CHECK(sig_of(g, s, "layer.0.attn.core").in[0].dims[1] == Sbp::split(2));
}
