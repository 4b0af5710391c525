// Pins `autoddl export`'s two halves (scheme_export.hpp): a scheme is recognised as the Megatron
// layout whose lowering it is, and only then exported, with Megatron-LM's own argument names.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/megatron_layout.hpp"
#include "autoddl/costmodel/scheme_export.hpp"
#include "autoddl/costmodel/zoo.hpp"

using namespace autoddl::costmodel;

namespace {

Graph small_gpt(const char* dtype = "bf16") {
  return build_zoo_model("gpt", {{"layers", "4"}, {"hidden", "512"}, {"heads", "8"}, {"seq", "256"},
                                 {"vocab", "1024"}, {"batch", "32"}, {"dtype", dtype}});
}

}  // namespace

TEST_CASE("every megatron spec is recognised as its own layout", "[costmodel][export]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph g = small_gpt();
  for (const std::string spec :
       {"megatron:tp=1,pp=1,dp=16", "megatron:tp=8,pp=1,dp=2,sp=1", "megatron:tp=4,pp=2,dp=2,mb=2,sp=1,recompute=selective",
        "megatron:tp=2,pp=2,dp=4,mb=1,interleave=2,sp=1,dist_opt=1,tp_overlap=1,pp_overlap=1",
        "megatron:tp=8,pp=2,dp=1,mb=4,recompute=full,sg=0", "megatron:tp=2,pp=1,dp=8,mb=2,dist_opt=1,param_overlap=0"}) {
    INFO(spec);
    const Scheme s = make_scheme(spec, g, c, {});
    const MegatronMatch m = match_megatron_layout(g, c, s);
    REQUIRE(m.layout);
    CHECK(m.why_not.empty());
    // The recovered spec lowers to the same scheme: same signatures, and it re-recognises.
    const Scheme again = make_scheme(m.layout->spec, g, c, {});
    REQUIRE(again.op_sigs.size() == s.op_sigs.size());
    for (size_t i = 0; i < s.op_sigs.size(); ++i) {
      for (int k = 0; k < s.op_sigs[i].n_in; ++k) CHECK(again.op_sigs[i].in[k] == s.op_sigs[i].in[k]);
    }
    CHECK(m.layout->tp * m.layout->pp * m.layout->dp == c.total_gpus());
    CHECK(m.layout->micro_batch_size * m.layout->dp * s.micro_batches == g.batch);
    CHECK(m.layout->dist_opt == s.shard_optimizer);
    CHECK(m.layout->interleave == s.virtual_stages);
  }
  // sp is read off the signatures: the same mesh without it is another layout.
  const MegatronMatch sp = match_megatron_layout(g, c, make_scheme("megatron:tp=4,pp=2,dp=2,mb=2,sp=1", g, c, {}));
  const MegatronMatch no_sp = match_megatron_layout(g, c, make_scheme("megatron:tp=4,pp=2,dp=2,mb=2,sp=0", g, c, {}));
  REQUIRE((sp.layout && no_sp.layout));
  CHECK(sp.layout->sequence_parallel);
  CHECK_FALSE(no_sp.layout->sequence_parallel);
}

TEST_CASE("a scheme that is no Megatron layout is refused naming its first differing op", "[costmodel][export]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const Graph g = small_gpt();
  Scheme s = make_scheme("megatron:tp=2,pp=1,dp=4,mb=2,sp=1", g, c, {});
  // Run the first weight GEMM replicated on the tensor dim instead of column-parallel.
  size_t changed = 0;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    if (g.ops[i].kind != OpKind::matmul || g.tensors[g.ops[i].inputs[1]].role != TensorRole::parameter) continue;
    for (int k = 0; k < s.op_sigs[i].n_in; ++k) s.op_sigs[i].in[k].dims[1] = Sbp::broadcast();
    s.op_sigs[i].out[0].dims[1] = Sbp::broadcast();
    changed = i;
    break;
  }
  REQUIRE(changed > 0);
  const MegatronMatch m = match_megatron_layout(g, c, s);
  CHECK_FALSE(m.layout);
  CHECK(m.why_not.find("op " + g.ops[changed].name + " runs") == 0);
  CHECK(m.why_not.find("nearest layout megatron:tp=2,pp=1,dp=4") != std::string::npos);
  try {
    export_scheme(find_export_format("megatron-lm"), g, c, s);
    FAIL("exported a scheme Megatron-LM does not run");
  } catch (const autoddl::InputError& e) {
    CHECK(std::string(e.what()).find("megatron-lm cannot run it: not a Megatron layout: op " + g.ops[changed].name) != std::string::npos);
  }
  // A CNN on a data-parallel mesh is a Megatron layout, but no Megatron model: refused.
  const Graph cnn = build_zoo_model("resnet50", {{"batch", "32"}});
  try {
    export_scheme(find_export_format("megatron-lm"), cnn, c, make_scheme("dp", cnn, c, {}));
    FAIL("exported a CNN to Megatron-LM");
  } catch (const autoddl::InputError& e) {
    CHECK(std::string(e.what()).find("has no attention") != std::string::npos);
  }
  // ZeRO-3's sharded parameter storage is not a Megatron layout either.
  const MegatronMatch z3 = match_megatron_layout(g, c, make_scheme("zero3", g, c, {}));
  CHECK_FALSE(z3.layout);
  CHECK(z3.why_not.find("stored") != std::string::npos);
}

TEST_CASE("the megatron-lm export writes only Megatron-LM's argument names with the layout's values",
          "[costmodel][export]") {
  std::ifstream f(AUTODDL_SOURCE_DIR "/tests/data/megatron_lm_core_r0.11.0_args.txt");
  REQUIRE(f.good());
  std::set<std::string> names;
  for (std::string line; std::getline(f, line);) {
    if (!line.empty() && line[0] != '#') names.insert(line);
  }
  REQUIRE(names.count("--tensor-model-parallel-size") == 1);
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph g = small_gpt("fp8");
  const std::string spec = "megatron:tp=2,pp=2,dp=4,mb=1,interleave=2,sp=1,recompute=full,dist_opt=1,tp_overlap=1";
  const std::string text = export_scheme(find_export_format("megatron-lm"), g, c, make_scheme(spec, g, c, {}));
  std::istringstream lines(text);
  std::map<std::string, std::string> args;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t sp = line.find(' ');
    const std::string name = line.substr(0, sp);
    INFO(name);
    CHECK(names.count(name) == 1);
    args[name] = sp == std::string::npos ? "" : line.substr(sp + 1);
  }
  CHECK(args["--tensor-model-parallel-size"] == "2");
  CHECK(args["--pipeline-model-parallel-size"] == "2");
  CHECK(args["--num-virtual-stages-per-pipeline-rank"] == "2");
  CHECK(args.count("--no-overlap-p2p-communication") == 1);  // pp_overlap=0 with interleaving
  CHECK(args.count("--sequence-parallel") == 1);
  CHECK(args.count("--tp-comm-overlap") == 1);
  CHECK(args["--micro-batch-size"] == "1");
  CHECK(args["--global-batch-size"] == "32");
  CHECK(args["--recompute-granularity"] == "full");
  CHECK(args.count("--use-distributed-optimizer") == 1);
  CHECK(args.count("--overlap-param-gather") == 1);
  CHECK(args.count("--bf16") == 1);
  CHECK(args["--fp8-format"] == "hybrid");
  // An option core_r0.11.0 cannot express is refused, not dropped.
  CHECK_THROWS_AS(export_scheme(find_export_format("megatron-lm"), g, c,
                                make_scheme("megatron:tp=2,pp=2,dp=4,mb=1,grad_reduce_bf16=1", g, c, {})),
                  autoddl::InputError);
  CHECK_THROWS_AS(find_export_format("torchtitan"), autoddl::InputError);
}

TEST_CASE("the megatron-bridge export sets the recipe fields to the layout's values", "[costmodel][export]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph g = small_gpt();
  const std::string spec = "megatron:tp=2,pp=2,dp=4,mb=1,interleave=2,sp=1,recompute=selective,dist_opt=1,grad_reduce_bf16=1";
  const std::string text = export_scheme(find_export_format("megatron-bridge"), g, c, make_scheme(spec, g, c, {}));
  std::map<std::string, std::string> fields;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("cfg.", 0) != 0) continue;
    const size_t eq = line.find(" = ");
    REQUIRE(eq != std::string::npos);
    fields[line.substr(4, eq - 4)] = line.substr(eq + 3);
  }
  CHECK(fields["model.tensor_model_parallel_size"] == "2");
  CHECK(fields["model.pipeline_model_parallel_size"] == "2");
  CHECK(fields["model.virtual_pipeline_model_parallel_size"] == "2");
  CHECK(fields["model.sequence_parallel"] == "True");
  CHECK(fields["train.global_batch_size"] == "32");
  CHECK(fields["train.micro_batch_size"] == "1");
  CHECK(fields["model.recompute_granularity"] == "\"selective\"");
  CHECK(fields["ddp.use_distributed_optimizer"] == "True");
  CHECK(fields["ddp.overlap_param_gather"] == "True");
  // Megatron-Bridge, unlike core_r0.11.0's arguments, can reduce bf16 gradients in bf16.
  CHECK(fields["ddp.grad_reduce_in_fp32"] == "False");
  CHECK(fields["comm_overlap"] == "CommOverlapConfig(tp_comm_overlap=False, overlap_p2p_comm=False)");
  CHECK(fields["mixed_precision"] == "\"bf16_mixed\"");
}
