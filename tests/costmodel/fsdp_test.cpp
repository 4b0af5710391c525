// Fully sharded data parallelism in the megatron scheme (fsdp=1: Megatron-FSDP's
// optim_grads_params): parameters, gradients and optimizer state sharded over dp x cp; each
// layer's parameter all-gather prefetched under the previous layer's forward and its backward
// re-gather under the next layer's backward, so what is exposed is the gather's excess over that
// compute (Scheme::fsdp); two layers' parameters and one layer's gradients held gathered; every
// micro-batch's gradients reduce-scattered; bad combinations refused naming the parameter.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/iteration_plan.hpp"
#include "autoddl/costmodel/megatron_layout.hpp"
#include "autoddl/costmodel/scheme_export.hpp"
#include "autoddl/costmodel/scheme_json.hpp"
#include "autoddl/costmodel/zoo.hpp"
#include "input_error.hpp"

using namespace autoddl::costmodel;

namespace {

// Llama 3 8B at sequence 8192 on one DGX H100, one sample per GPU per micro-batch.
Graph llama_8b(int batch = 8) {
  return build_zoo_model("llama", parse_knob_list("size=3-8b,seq=8192,batch=" + std::to_string(batch)));
}

// Per layer (block label) of a one-stage scheme: the forward gather of its parameters per
// micro-batch (the plan's parameter paths), its forward compute and its backward compute with
// recompute (what a neighbour's gather hides under), and what evaluate() charged its ops' boxing
// per iteration.
struct Layer {
  double gather_s = 0, fwd_s = 0, bwd_s = 0, boxing_s = 0;
};
std::map<std::string, Layer> layers(const Graph& g, const ClusterSpec& c, const Scheme& s, CostReport& r) {
  IterationPlan plan;
  r = evaluate(g, c, s, &plan);
  std::map<std::string, Layer> out;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    Layer& l = out[g.ops[i].block];
    const PlannedOp& op = plan.ops[i];
    l.fwd_s += op.fwd_s;
    l.bwd_s += op.bwd_s + op.recompute_s;
    l.boxing_s += r.per_op[i].boxing_s;
    for (const PlannedInput& in : op.inputs) {
      if (in.role != InputRole::parameter) continue;
      for (const BoxingStep& st : in.fwd) l.gather_s += st.time_s;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("fsdp=1 shards parameters, gradients and optimizer state over dp and gathers them per layer",
          "[costmodel][fsdp]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 1);
  const Graph g = llama_8b();
  const Scheme s = make_scheme("megatron:tp=1,pp=1,dp=8,mb=1,fsdp=1", g, c, {});
  CHECK(s.fsdp);
  CHECK(s.regather_in_backward);
  CHECK(s.shard_optimizer);          // Megatron-FSDP runs with --use-distributed-optimizer
  CHECK_FALSE(s.overlap_param_gather);  // no post-step gather: parameters stay sharded
  const int w = g.find_tensor("layer.3.ffn.up.weight");
  REQUIRE(w >= 0);
  CHECK(s.param_storage[w].dims[0].is_split());
  const CostReport r = evaluate(g, c, s);
  // bf16 parameters, fp32 main gradients and Adam's 12 bytes: 18 bytes per parameter, over 8 GPUs.
  CHECK(r.param_memory_bytes == Approx(r.params * 18 / 8).epsilon(0.001));
  CHECK(r.feasible);
  // The same layout with the distributed optimizer alone keeps bf16 parameters and fp32
  // gradients whole: out of memory on an 80 GB H100 (issue 30: FSDP is how this is run).
  const CostReport zero1 = evaluate(g, c, make_scheme("megatron:tp=1,pp=1,dp=8,mb=1,dist_opt=1", g, c, {}));
  CHECK_FALSE(zero1.feasible);
  // The JSON round trip keeps the option, and the scheme is Megatron-FSDP's layout.
  const Scheme back = scheme_from_json(scheme_to_json(s, g), g, c, "fsdp.json");
  CHECK(back.fsdp);
  const MegatronMatch m = match_megatron_layout(g, c, s);
  REQUIRE(m.layout);
  CHECK(m.layout->fsdp);
  CHECK_THAT(m.layout->spec, Catch::Contains("fsdp=1"));
}

TEST_CASE("fsdp's per-layer parameter gather is exposed only where it outlasts the neighbouring layer's compute",
          "[costmodel][fsdp]") {
  ClusterSpec c = resolve_cluster("dgx-h100", 1);
  c.gpu.sm_count = 0;  // no SM charge for the overlapped gathers: exposure alone
  const Graph g = llama_8b();
  const Scheme fsdp = make_scheme("megatron:tp=1,pp=1,dp=8,mb=1,fsdp=1", g, c, {});
  Scheme zero3 = fsdp;  // the same storage and re-gather, every gather on the critical path
  zero3.fsdp = false;
  CostReport r, r3;
  const std::map<std::string, Layer> on = layers(g, c, fsdp, r), off = layers(g, c, zero3, r3);
  REQUIRE(r.micro_batches == 1);
  const Layer& mid = on.at("layer.10");
  REQUIRE(mid.gather_s > 0);
  // NVLink: a layer's gather (~220 M bf16 parameters) is far shorter than a layer's compute at
  // 8,192 tokens, so nothing of it is exposed; without the prefetch it is paid twice.
  REQUIRE(mid.gather_s < on.at("layer.9").fwd_s);
  REQUIRE(mid.gather_s < on.at("layer.11").bwd_s);
  CHECK(mid.boxing_s == Approx(0).margin(1e-12));
  CHECK(off.at("layer.10").boxing_s == Approx(2 * mid.gather_s).epsilon(1e-9));
  CHECK(r.iteration_s < r3.iteration_s);

  // Sequence 512: a layer's compute is 1/16 of the above, shorter than its gather, and exactly
  // the excess is exposed, forward (under layer 9's forward) and backward (under layer 11's
  // backward).
  const Graph short_seq = build_zoo_model("llama", parse_knob_list("size=3-8b,seq=512,batch=8"));
  CostReport rs;
  const std::map<std::string, Layer> sl =
      layers(short_seq, c, make_scheme("megatron:tp=1,pp=1,dp=8,mb=1,fsdp=1", short_seq, c, {}), rs);
  const Layer& m10 = sl.at("layer.10");
  REQUIRE(m10.gather_s > sl.at("layer.9").fwd_s);
  REQUIRE(m10.gather_s > sl.at("layer.11").bwd_s);
  const double excess = (m10.gather_s - sl.at("layer.9").fwd_s) + (m10.gather_s - sl.at("layer.11").bwd_s);
  CHECK(m10.boxing_s == Approx(excess).epsilon(1e-9));
}

TEST_CASE("fsdp holds two layers' gathered parameters and one layer's full gradients", "[costmodel][fsdp]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 1);
  const Graph g = llama_8b();
  const Scheme s = make_scheme("megatron:tp=1,pp=1,dp=8,mb=1,fsdp=1", g, c, {});
  Scheme zero3 = s;
  zero3.fsdp = false;  // ZeRO-3's transient: one op's gathered weights at a time
  const CostReport r = evaluate(g, c, s), r3 = evaluate(g, c, zero3);
  // A decoder layer's parameters, gathered from their 1/8 shards: 7/8 of them arrive.
  double layer_bytes = 0;
  for (const Tensor& t : g.tensors) {
    if (t.role == TensorRole::parameter && t.name.rfind("layer.5.", 0) == 0) layer_bytes += static_cast<double>(t.bytes());
  }
  const double gathered = layer_bytes * 7 / 8;
  const double transient = r.peak_memory_bytes - r.param_memory_bytes - r.activation_memory_bytes;
  // Two layers' parameters and one layer's fp32 gradients (twice the bf16 bytes) at least.
  CHECK(transient >= 2 * gathered + 2 * gathered - 1);
  CHECK(transient > r3.peak_memory_bytes - r3.param_memory_bytes - r3.activation_memory_bytes);
  CHECK(r.param_memory_bytes == r3.param_memory_bytes);
}

TEST_CASE("fsdp reduce-scatters every micro-batch's gradients", "[costmodel][fsdp]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 1);
  const Graph g = llama_8b(32);
  const Scheme s = make_scheme("megatron:tp=1,pp=1,dp=8,mb=1,fsdp=1", g, c, {});
  REQUIRE(s.micro_batches == 4);
  Scheme once = s;  // ZeRO-3 pricing: one gradient sync per iteration
  once.fsdp = false;
  const CostReport r = evaluate(g, c, s), r1 = evaluate(g, c, once);
  const auto rs = static_cast<size_t>(CollectiveKind::reduce_scatter);
  REQUIRE(r1.comm.count[rs] > 0);
  CHECK(r.comm.count[rs] == Approx(4 * r1.comm.count[rs]));
  CHECK(r.grad_sync_s == Approx(4 * r1.grad_sync_s));
}

TEST_CASE("fsdp=1 refuses what Megatron-FSDP does not run, naming the parameter", "[costmodel][fsdp]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 1);
  const Graph g = llama_8b();
  CHECK_INPUT_ERROR(make_scheme("megatron:tp=1,pp=1,dp=8,mb=1,fsdp=1,dist_opt=0", g, c, {}), "dist_opt",
                    "--use-distributed-optimizer");
  CHECK_INPUT_ERROR(make_scheme("megatron:tp=1,pp=1,dp=8,mb=1,fsdp=1,param_overlap=1", g, c, {}), "param_overlap",
                    "does not apply with fsdp=1");
  CHECK_INPUT_ERROR(make_scheme("megatron:tp=8,pp=1,dp=1,mb=1,fsdp=1", g, c, {}), "fsdp", "dp*cp > 1");
  CHECK_INPUT_ERROR(make_scheme("megatron:tp=1,pp=1,dp=8,mb=1,fsdp=2", g, c, {}), "fsdp", "0 or 1");
  const Graph moe = build_zoo_model("mixtral-8x7b", parse_knob_list("layers=2,batch=8"));
  CHECK_INPUT_ERROR(make_scheme("megatron:tp=1,pp=1,dp=8,mb=1,ep=8,fsdp=1", moe, c, {}), "fsdp", "experts");
}

TEST_CASE("fsdp=1 exports as Megatron-FSDP to Megatron-LM and Megatron-Bridge and as FSDP2 to torchtitan",
          "[costmodel][fsdp][export]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 1);
  const Graph g = llama_8b();
  const Scheme s = make_scheme("megatron:tp=1,pp=1,dp=8,mb=1,fsdp=1", g, c, {});
  const std::string lm = export_scheme(find_export_format("megatron-lm"), g, c, s);
  // Megatron-LM's Megatron-FSDP user guide: its required flags, and --overlap-param-gather for
  // the prefetch priced.
  for (const char* arg : {"--use-megatron-fsdp\n", "--data-parallel-sharding-strategy optim_grads_params\n",
                          "--no-gradient-accumulation-fusion\n", "--use-distributed-optimizer\n",
                          "--ckpt-format fsdp_dtensor\n", "--overlap-param-gather\n"}) {
    INFO(arg);
    CHECK_THAT(lm, Catch::Contains(arg));
  }
  const std::string bridge = export_scheme(find_export_format("megatron-bridge"), g, c, s);
  CHECK_THAT(bridge, Catch::Contains("cfg.ddp.use_megatron_fsdp = True\n"));
  CHECK_THAT(bridge, Catch::Contains("cfg.ddp.data_parallel_sharding_strategy = \"optim_grads_params\"\n"));
  CHECK_THAT(bridge, Catch::Contains("cfg.ddp.overlap_param_gather = True\n"));
  const std::string titan = export_scheme(find_export_format("torchtitan"), g, c, s);
  CHECK_THAT(titan, Catch::Contains("data_parallel_shard_degree = 8\n"));
  CHECK_THAT(titan, Catch::Contains("fsdp_reshard_after_forward = \"always\"\n"));
  // Without fsdp the same layout is the distributed optimizer: none of it.
  const Scheme zero1 = make_scheme("megatron:tp=1,pp=1,dp=8,mb=1,dist_opt=1", g, c, {});
  CHECK_THAT(export_scheme(find_export_format("megatron-lm"), g, c, zero1),
             !Catch::Contains("--use-megatron-fsdp"));
}

TEST_CASE("hsdp=R shards within dp/R consecutive ranks and replicates across R: reduce-scatter inside, all-reduce across",
          "[costmodel][fsdp][hsdp]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 2);
  const Graph g = llama_8b(16);
  const Scheme h = make_scheme("megatron:tp=1,pp=1,dp=16,mb=1,fsdp=1,hsdp=2", g, c, {});
  REQUIRE(h.mesh_shape == std::vector<int>{2, 8});  // [replicas, shard group]: the group is a node
  const int w = g.find_tensor("layer.3.ffn.up.weight");
  REQUIRE(w >= 0);
  CHECK(h.param_storage[w].dims[0].is_broadcast());
  CHECK(h.param_storage[w].dims[1].is_split());
  CHECK(h.fsdp);
  CHECK_FALSE(h.shard_optimizer);  // the optimizer state follows the storage: sharded within the group only
  const CostReport rh = evaluate(g, c, h);
  // 18 bytes per parameter over the 8 ranks of a shard group, as FSDP on one node.
  CHECK(rh.param_memory_bytes == Approx(rh.params * 18 / 8).epsilon(0.001));
  const auto ar = static_cast<size_t>(CollectiveKind::all_reduce), rs = static_cast<size_t>(CollectiveKind::reduce_scatter);
  CHECK(rh.comm.count[rs] > 0);
  CHECK(rh.comm.count[ar] > 0);  // gradients all-reduced across the replicas
  // FSDP over all 16 ranks: half the memory, gathers across the nodes, no all-reduce.
  const CostReport rf = evaluate(g, c, make_scheme("megatron:tp=1,pp=1,dp=16,mb=1,fsdp=1", g, c, {}));
  CHECK(rf.param_memory_bytes == Approx(rh.param_memory_bytes / 2).epsilon(0.001));
  CHECK(rf.comm.count[ar] == 0);
  // Megatron-FSDP's and torchtitan's names for it.
  const MegatronMatch m = match_megatron_layout(g, c, h);
  REQUIRE(m.layout);
  CHECK(m.layout->hsdp == 2);
  const std::string lm = export_scheme(find_export_format("megatron-lm"), g, c, h);
  CHECK_THAT(lm, Catch::Contains("--num-distributed-optimizer-instances 2\n"));
  CHECK_THAT(lm, Catch::Contains("--outer-dp-sharding-strategy no_shard\n"));
  const std::string titan = export_scheme(find_export_format("torchtitan"), g, c, h);
  CHECK_THAT(titan, Catch::Contains("data_parallel_replicate_degree = 2\n"));
  CHECK_THAT(titan, Catch::Contains("data_parallel_shard_degree = 8\n"));
  // Bad combinations, one line each.
  CHECK_INPUT_ERROR(make_scheme("megatron:tp=1,pp=1,dp=16,mb=1,hsdp=2", g, c, {}), "hsdp", "needs fsdp=1");
  CHECK_INPUT_ERROR(make_scheme("megatron:tp=1,pp=1,dp=16,mb=1,fsdp=1,hsdp=3", g, c, {}), "hsdp", "must divide dp");
  CHECK_INPUT_ERROR(make_scheme("megatron:tp=2,pp=1,dp=4,cp=2,mb=1,sp=1,fsdp=1,hsdp=2", g, c, {}), "hsdp",
                    "4 data/model mesh dims");
}
