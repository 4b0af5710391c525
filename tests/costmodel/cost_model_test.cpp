// Pins the analytical model's invariants (issue 3) through the code path the CLI uses:
// make_scheme (expert lowering to per-op signatures) then evaluate.
#include <catch2/catch.hpp>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/graph_builder.hpp"
#include "autoddl/costmodel/zoo.hpp"

using namespace autoddl::costmodel;

namespace {

double kind(const CostReport& r, CollectiveKind k, const char* what) {
  auto i = static_cast<size_t>(k);
  std::string w = what;
  return w == "count" ? r.comm.count[i] : w == "bytes" ? r.comm.bytes[i] : r.comm.time_s[i];
}

double total_count(const CostReport& r) {
  double n = 0;
  for (double c : r.comm.count) n += c;
  return n;
}

Graph tiny_gpt(int64_t batch = 16) {
  return build_zoo_model("gpt", {{"layers", "2"}, {"hidden", "256"}, {"heads", "8"}, {"seq", "128"},
                                 {"vocab", "1024"}, {"batch", std::to_string(batch)}});
}

// LayerNorm → column-parallel linear → GeLU → row-parallel linear → loss: one Megatron MLP.
Graph mlp_block(int64_t b, int64_t s, int64_t h) {
  GraphBuilder gb("mlp_block", "test", b, DType::fp16);
  int x = gb.input("x", {b, s, h}, DType::fp16);
  int labels = gb.input("labels", {b, s}, DType::int64);
  int y = gb.ln("ln", x);
  y = gb.linear("fc1", y, 4 * h);
  y = gb.gelu("gelu", y);
  y = gb.linear("fc2", y, h);
  gb.cross_entropy("loss", y, labels);
  return gb.finish();
}

double param_bytes(const Graph& g) { return static_cast<double>(g.parameter_bytes()); }

}  // namespace

TEST_CASE("a 1-GPU mesh has zero communication for every scheme", "[costmodel][cost]") {
  ClusterSpec one = resolve_cluster("piz-daint", 1);
  Graph g = tiny_gpt();
  for (const char* s : {"dp", "zero1", "zero3", "owt", "megatron:tp=1,pp=1,dp=1"}) {
    CostReport r = evaluate(g, one, make_scheme(s, g, one, {}));
    INFO(s);
    CHECK(r.comm.total_s() == 0);
    CHECK(total_count(r) == 0);
    CHECK(r.comm_exposed_s == 0);
    CHECK(r.iteration_s > 0);
    CHECK(r.iteration_s == Approx(r.compute_s));
  }
}

TEST_CASE("dp on p GPUs all-reduces every gradient once: 2(p-1)/p of the gradient bytes per device",
          "[costmodel][cost]") {
  ClusterSpec c = resolve_cluster("dgx-a100", 1);
  Graph g = build_zoo_model("mlp", {{"batch", "64"}});
  Scheme s = make_scheme("dp", g, c, {8});
  CostReport r = evaluate(g, c, s);
  CHECK(kind(r, CollectiveKind::all_reduce, "bytes") == Approx(2.0 * 7 / 8 * param_bytes(g)));
  CHECK(kind(r, CollectiveKind::all_reduce, "count") >= 1);
  CHECK(total_count(r) == kind(r, CollectiveKind::all_reduce, "count"));  // nothing but all-reduce
  s.bucket_bytes = 1e18;  // one bucket: exactly one all-reduce of all gradients
  CostReport one = evaluate(g, c, s);
  CHECK(kind(one, CollectiveKind::all_reduce, "count") == 1);
  CHECK(kind(one, CollectiveKind::all_reduce, "bytes") == Approx(2.0 * 7 / 8 * param_bytes(g)));
}

TEST_CASE("a Megatron MLP block costs one all-reduce forward and one backward of the activation",
          "[costmodel][cost][megatron]") {
  ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const int64_t b = 8, s = 64, h = 512;
  Graph g = mlp_block(b, s, h);
  const double act = b * s * h * 2.0;  // fp16 activation entering and leaving the block
  CostReport r = evaluate(g, c, make_scheme("megatron:tp=8,pp=1,dp=1", g, c, {}));
  CHECK(kind(r, CollectiveKind::all_reduce, "count") == 2);
  CHECK(kind(r, CollectiveKind::all_reduce, "bytes") == Approx(2 * (2.0 * 7 / 8 * act)));
  CHECK(kind(r, CollectiveKind::all_gather, "count") == 0);
  CHECK(kind(r, CollectiveKind::reduce_scatter, "count") == 0);

  // Sequence parallelism turns each all-reduce into a reduce-scatter plus an all-gather,
  // moving the same bytes in total.
  // The LayerNorm then runs sequence-split, so its gamma and beta gradients are partial on the
  // tensor dim and need one (tiny) all-reduce, as in Megatron-LM with sequence parallelism; so
  // does fc2's bias, added after the reduce-scatter (RowParallelLinear's skip_bias_add), whose
  // gradient Megatron-LM all-reduces over tp with the LayerNorm's.
  CostReport sp = evaluate(g, c, make_scheme("megatron:tp=8,pp=1,dp=1,sp=1", g, c, {}));
  // fc1 keeps its input (the LayerNorm output) sequence-split and gathers it again in backward
  // for its weight gradient: one more all-gather of the same bytes.
  CHECK(kind(sp, CollectiveKind::reduce_scatter, "count") == 2);
  CHECK(kind(sp, CollectiveKind::all_gather, "count") == 3);
  double sp_bytes = kind(sp, CollectiveKind::reduce_scatter, "bytes") + kind(sp, CollectiveKind::all_gather, "bytes");
  // 2 reduce-scatters and 3 all-gathers of (n-1)/n of the activation against 2 all-reduces of 2(n-1)/n.
  CHECK(sp_bytes == Approx(kind(r, CollectiveKind::all_reduce, "bytes") * 5 / 4));
  const double ln_params = 2.0 * h * 2;  // gamma + beta, fp16
  const double fc2_bias = h * 2.0;
  CHECK(kind(sp, CollectiveKind::all_reduce, "count") == 2);
  CHECK(kind(sp, CollectiveKind::all_reduce, "bytes") == Approx(2.0 * 7 / 8 * (ln_params + fc2_bias)));
}

TEST_CASE("zero3 moves 1.5x the bytes of dp, zero1 moves the same with less optimizer memory",
          "[costmodel][cost][zero]") {
  ClusterSpec c = resolve_cluster("dgx-a100", 1);
  // Every parameter of this MLP sits in a batch-parallel op, so all communication is
  // gradient sync (GPT's position table, indexed without the batch, is computed replicated).
  Graph g = build_zoo_model("mlp", {{"batch", "64"}});
  CostReport dp = evaluate(g, c, make_scheme("dp", g, c, {8}));
  CostReport z1 = evaluate(g, c, make_scheme("zero1", g, c, {8}));
  CostReport z3 = evaluate(g, c, make_scheme("zero3", g, c, {8}));
  auto bytes = [](const CostReport& r) {
    double b = 0;
    for (double x : r.comm.bytes) b += x;
    return b;
  };
  CHECK(bytes(z3) == Approx(1.5 * bytes(dp)));
  CHECK(bytes(z1) == Approx(bytes(dp)));
  CHECK(z1.param_memory_bytes < dp.param_memory_bytes);
  // Weights + gradients in the model dtype, plus Adam's state (fp32 moments; and an fp32 master
  // copy in mixed precision). ZeRO-1 splits the state over 8; ZeRO-3 splits everything.
  const double w = static_cast<double>(g.parameter_bytes()) / g.parameter_count();
  const double opt = w == 2 ? 12 : 8;
  const double n = static_cast<double>(g.parameter_count());
  CHECK(dp.param_memory_bytes == Approx((2 * w + opt) * n));
  CHECK(z1.param_memory_bytes == Approx((2 * w + opt / 8) * n));
  CHECK(z3.param_memory_bytes == Approx((2 * w + opt) / 8 * n));
}

TEST_CASE("pipeline bubble is (p-1)/(m+p-1) of the schedule and interleaving divides it by v",
          "[costmodel][cost][pipeline]") {
  ClusterSpec c = resolve_cluster("dgx-a100", 1);
  Graph g = build_zoo_model("gpt", {{"layers", "8"}, {"hidden", "256"}, {"heads", "8"}, {"seq", "128"},
                                    {"vocab", "1024"}, {"batch", "16"}});
  for (const char* sched : {"gpipe", "1f1b"}) {
    CostReport r = evaluate(g, c, make_scheme(std::string("megatron:tp=1,pp=4,dp=2,mb=1,schedule=") + sched, g, c, {}));
    INFO(sched);
    REQUIRE(r.stages == 4);
    REQUIRE(r.micro_batches == 8);
    double schedule = r.micro_batches * r.stage_time_s + r.bubble_s;
    CHECK(r.bubble_s / schedule == Approx(3.0 / (8 + 3)));
  }
  CostReport flat = evaluate(g, c, make_scheme("megatron:tp=1,pp=4,dp=2,mb=1", g, c, {}));
  CostReport inter = evaluate(g, c, make_scheme("megatron:tp=1,pp=4,dp=2,mb=1,interleave=2", g, c, {}));
  CHECK(inter.bubble_s == Approx(3.0 / 2 * inter.stage_time_s));
  CHECK(inter.bubble_s < flat.bubble_s);
  CHECK(kind(inter, CollectiveKind::send_recv, "count") > kind(flat, CollectiveKind::send_recv, "count"));
}

TEST_CASE("a scheme that does not fit is an input error, one that runs out of memory is infeasible",
          "[costmodel][cost]") {
  ClusterSpec c = resolve_cluster("dgx-a100", 2);
  Graph g = tiny_gpt();
  CHECK_THROWS_WITH(make_scheme("megatron:tp=8,pp=1,dp=1", g, c, {}), Catch::Contains("tp*pp*dp = 8") && Catch::Contains("16 GPUs"));
  CHECK_THROWS_WITH(make_scheme("megatron:tp=8,pp=3,dp=1", g, c, {}), Catch::Contains("tp*pp*dp"));
  CHECK_THROWS_WITH(make_scheme("megatron:tp=4,pp=2,dp=2,mb=3", g, c, {}), Catch::Contains("mb"));
  CHECK_THROWS_WITH(make_scheme("nonsense", g, c, {}), Catch::Contains("unknown scheme"));
  // Megatron splits attention by heads: 12 heads over tp=8 is refused, as Megatron-LM does.
  Graph twelve = build_zoo_model("gpt", {{"layers", "1"}, {"hidden", "768"}, {"heads", "12"}, {"batch", "16"}});
  CHECK_THROWS_WITH(make_scheme("megatron:tp=8,pp=1,dp=2", twelve, c, {}),
                    Catch::Contains("12 attention heads") && Catch::Contains("heads % tp"));
  CHECK_NOTHROW(make_scheme("megatron:tp=4,pp=1,dp=4", twelve, c, {}));
  Graph big = build_zoo_model("gpt", {{"layers", "48"}, {"hidden", "4096"}, {"heads", "32"}, {"batch", "16"}});
  CostReport r = evaluate(big, c, make_scheme("dp", big, c, {}));
  CHECK_FALSE(r.feasible);
  CHECK_THAT(r.infeasible_reason, Catch::Contains("exceeds"));
}

TEST_CASE("Megatron GPT: 2 forward and 2 backward all-reduces per layer plus embeddings and gradient sync",
          "[costmodel][cost][megatron]") {
  ClusterSpec c = resolve_cluster("dgx-a100", 2);
  for (int layers : {2, 6}) {
    Graph g = build_zoo_model("gpt", {{"layers", std::to_string(layers)}, {"hidden", "768"}, {"heads", "16"},
                                      {"seq", "1024"}, {"batch", "64"}});
    Scheme s = make_scheme("megatron:tp=8,pp=1,dp=2", g, c, {});
    s.bucket_bytes = 1e18;  // one gradient bucket, to count the boxing all-reduces exactly
    CostReport r = evaluate(g, c, s);
    INFO(layers << " layers");
    // + 1 after the vocab-parallel embedding, + 1 for the LM head's input gradient,
    // + 1 data-parallel bucket of all gradients, + 1 over dp for the position lookup's output
    // gradient (positions carry no batch, so data parallelism runs that lookup replicated).
    CHECK(kind(r, CollectiveKind::all_reduce, "count") == 4 * layers + 4);
    CHECK(r.feasible);
  }
}

TEST_CASE("megatron scatters pipeline sends over tensor-parallel ranks and all-gathers them on NVLink",
          "[costmodel][cost][pipeline]") {
  // Narayanan et al. SC'21 §4.1: each of the t ranks sends 1/t of the replicated activation
  // over the network and the receivers all-gather it over NVLink; sg=0 sends it whole.
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph g = build_zoo_model("gpt", parse_knob_list("layers=4,hidden=1024,heads=16,seq=1024,batch=16"));
  IterationPlan on, off;
  const CostReport r_on = evaluate(g, c, make_scheme("megatron:tp=8,pp=2,dp=1,mb=1", g, c, {}), &on);
  const CostReport r_off = evaluate(g, c, make_scheme("megatron:tp=8,pp=2,dp=1,mb=1,sg=0", g, c, {}), &off);
  int boundaries = 0;
  for (size_t i = 0; i < on.ops.size(); ++i) {
    for (size_t k = 0; k < on.ops[i].inputs.size(); ++k) {
      const PlannedInput& a = on.ops[i].inputs[k];
      const PlannedInput& b = off.ops[i].inputs[k];
      if (!a.cross_stage) continue;
      ++boundaries;
      CHECK(a.fwd_send_bytes == Approx(b.fwd_send_bytes / 8));
      REQUIRE(a.fwd_send_gather.size() == 1);
      CHECK(a.fwd_send_gather[0].kind == CollectiveKind::all_gather);
      CHECK(a.fwd_send_gather[0].bytes == Approx(b.fwd_send_bytes));  // the whole tensor, rebuilt
      CHECK(b.fwd_send_gather.empty());
    }
  }
  CHECK(boundaries >= 1);
  CHECK(r_on.send_recv_s < 0.5 * r_off.send_recv_s);  // 1/8 over InfiniBand plus an NVLink gather
  CHECK(r_on.iteration_s < r_off.iteration_s);
}
