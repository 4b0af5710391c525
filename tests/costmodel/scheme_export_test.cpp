// Pins `autoddl export`'s two halves (scheme_export.hpp): a scheme is recognised as the Megatron
// layout whose lowering it is, and only then exported, with the framework's own names
// (Megatron-LM's arguments, Megatron-Bridge's recipe fields, torchtitan's job-config keys).
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

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
  CHECK_THROWS_AS(find_export_format("deepspeed"), autoddl::InputError);
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

namespace {

// A torchtitan export's TOML as "table.key" -> value (values as written, strings quoted), and
// its `# note:` lines.
struct Toml {
  std::map<std::string, std::string> keys;
  std::vector<std::string> notes;
  std::string text;
  bool has_note(const std::string& part) const {
    for (const std::string& n : notes) {
      if (n.find(part) != std::string::npos) return true;
    }
    return false;
  }
};

Toml torchtitan(const Graph& g, const ClusterSpec& c, const std::string& spec) {
  Toml t;
  t.text = export_scheme(find_export_format("torchtitan"), g, c, make_scheme(spec, g, c, {}));
  std::istringstream lines(t.text);
  std::string table;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# note: ", 0) == 0) t.notes.push_back(line.substr(8));
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '[') {
      table = line.substr(1, line.size() - 2);
      continue;
    }
    const size_t eq = line.find(" = ");
    REQUIRE(eq != std::string::npos);
    t.keys[table + "." + line.substr(0, eq)] = line.substr(eq + 3);
  }
  return t;
}

}  // namespace

TEST_CASE("the torchtitan export writes only v0.2.2 job-config keys with the layout's values", "[costmodel][export]") {
  std::ifstream f(AUTODDL_SOURCE_DIR "/tests/data/torchtitan_v0.2.2_job_config_keys.txt");
  REQUIRE(f.good());
  std::set<std::string> names;
  for (std::string line; std::getline(f, line);) {
    if (!line.empty() && line[0] != '#') names.insert(line);
  }
  REQUIRE(names.count("parallelism.tensor_parallel_degree") == 1);
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph g = small_gpt("fp8");
  const Toml t = torchtitan(g, c, "megatron:tp=2,pp=2,dp=4,mb=1,interleave=2,sp=1,recompute=full,dist_opt=1,tp_overlap=1");
  for (const auto& [key, value] : t.keys) {
    INFO(key);
    CHECK(names.count(key) == 1);
  }
  CHECK(t.keys.at("parallelism.tensor_parallel_degree") == "2");
  CHECK(t.keys.at("parallelism.pipeline_parallel_degree") == "2");
  CHECK(t.keys.at("parallelism.data_parallel_shard_degree") == "4");
  CHECK(t.keys.at("parallelism.data_parallel_replicate_degree") == "1");
  CHECK(t.keys.at("parallelism.context_parallel_degree") == "1");
  // Megatron's interleaved schedule, its micro-batch and its even split: 4 layers over 2 x 2 stages.
  CHECK(t.keys.at("parallelism.pipeline_parallel_schedule") == "\"Interleaved1F1B\"");
  CHECK(t.keys.at("parallelism.pipeline_parallel_microbatch_size") == "1");
  CHECK(t.keys.at("parallelism.pipeline_parallel_layers_per_stage") == "1");
  CHECK(t.keys.at("parallelism.pipeline_parallel_first_stage_less_layers") == "0");
  CHECK(t.keys.at("parallelism.pipeline_parallel_last_stage_less_layers") == "0");
  CHECK(t.keys.at("parallelism.fsdp_reshard_after_forward") == "\"never\"");
  CHECK(t.keys.at("parallelism.enable_async_tensor_parallel") == "true");
  // With a pipeline one step holds the whole per-rank batch: 32 / dp 4.
  CHECK(t.keys.at("training.local_batch_size") == "8");
  CHECK(t.keys.at("training.global_batch_size") == "32");
  CHECK(t.keys.at("training.seq_len") == "256");
  CHECK(t.keys.at("training.mixed_precision_param") == "\"bfloat16\"");
  CHECK(t.keys.at("activation_checkpoint.mode") == "\"full\"");
  CHECK(t.keys.at("model.converters") == "[\"quantize.linear.float8\"]");
  CHECK(t.keys.at("quantize.linear.float8.filter_fqns") == "[\"output\"]");
  CHECK(t.keys.at("compile.enable") == "true");  // async TP and float8 need it
  CHECK(t.keys.count("parallelism.expert_parallel_degree") == 0);  // a dense model
  // gpt's attention core is unfused by default: the program torchtitan runs differs.
  CHECK(t.has_note("flash=0"));
  CHECK_FALSE(t.has_note("dist_opt=0"));
  CHECK_FALSE(t.has_note("sp=0"));
}

TEST_CASE("the torchtitan export picks the pipeline schedule and the data-parallel kind the layout runs",
          "[costmodel][export]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph g = small_gpt();
  const Toml one = torchtitan(g, c, "megatron:tp=2,pp=2,dp=4,mb=2,sp=1");
  CHECK(one.keys.at("parallelism.pipeline_parallel_schedule") == "\"1F1B\"");
  CHECK(one.keys.at("parallelism.pipeline_parallel_microbatch_size") == "2");
  CHECK(one.keys.at("parallelism.pipeline_parallel_layers_per_stage") == "2");
  CHECK(one.keys.at("activation_checkpoint.mode") == "\"none\"");
  CHECK(one.keys.count("compile.enable") == 0);
  // No distributed optimizer: FSDP2 all the same beside tp and pp, and a note says so.
  CHECK(one.keys.at("parallelism.data_parallel_shard_degree") == "4");
  CHECK(one.has_note("dist_opt=0"));
  const Toml gpipe = torchtitan(g, c, "megatron:tp=2,pp=2,dp=4,mb=2,sp=1,schedule=gpipe");
  CHECK(gpipe.keys.at("parallelism.pipeline_parallel_schedule") == "\"GPipe\"");
  // Data parallelism alone without the distributed optimizer is DDP.
  const Toml ddp = torchtitan(g, c, "megatron:tp=1,pp=1,dp=16,mb=2");
  CHECK(ddp.keys.at("parallelism.data_parallel_replicate_degree") == "16");
  CHECK(ddp.keys.at("parallelism.data_parallel_shard_degree") == "1");
  CHECK(ddp.keys.count("parallelism.pipeline_parallel_schedule") == 0);
  CHECK(ddp.keys.count("parallelism.fsdp_reshard_after_forward") == 0);
  const Toml zero1 = torchtitan(g, c, "megatron:tp=1,pp=1,dp=16,mb=2,dist_opt=1");
  CHECK(zero1.keys.at("parallelism.data_parallel_replicate_degree") == "1");
  CHECK(zero1.keys.at("parallelism.data_parallel_shard_degree") == "16");
  // Without a pipeline local_batch_size is the micro-batch, and torchtitan accumulates 32 / (2 x 8)
  // of them, reducing gradients after each: noted.
  const Toml accum = torchtitan(g, c, "megatron:tp=2,pp=1,dp=8,mb=2,sp=0");
  CHECK(accum.keys.at("training.local_batch_size") == "2");
  CHECK(accum.keys.at("training.global_batch_size") == "32");
  CHECK(accum.has_note("each of the 2 accumulated micro-batches"));
  CHECK(accum.has_note("sp=0"));
  CHECK_FALSE(torchtitan(g, c, "megatron:tp=2,pp=1,dp=8,mb=4,sp=1").has_note("accumulated"));
}

TEST_CASE("the torchtitan export maps recompute and uneven stages and context and expert parallelism",
          "[costmodel][export]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 1);
  const Graph g = build_zoo_model("llama", parse_knob_list("size=3-8b,layers=10,batch=8"));
  const Toml uneven = torchtitan(g, c, "megatron:tp=2,pp=4,dp=1,layout=Ett|(ttt|)*2ttL");
  CHECK(uneven.keys.at("parallelism.module_fqns_per_model_part") ==
        "[[\"tok_embeddings\", \"layers.0\", \"layers.1\"], [\"layers.2\", \"layers.3\", \"layers.4\"], "
        "[\"layers.5\", \"layers.6\", \"layers.7\"], [\"layers.8\", \"layers.9\", \"norm\", \"output\"]]");
  CHECK(uneven.keys.count("parallelism.pipeline_parallel_layers_per_stage") == 0);
  CHECK_FALSE(uneven.has_note("flash=0"));  // llama runs fused attention by default
  // Megatron's core_attn recompute has nothing to drop beside SDPA; other modules become per-op AC.
  const Toml core = torchtitan(g, c, "megatron:tp=2,pp=1,dp=4,sp=1,recompute=selective");
  CHECK(core.keys.at("activation_checkpoint.mode") == "\"none\"");
  CHECK(core.has_note("core_attn"));
  const Toml mlp = torchtitan(g, c, "megatron:tp=2,pp=1,dp=4,sp=1,recompute=selective,recompute_modules=mlp");
  CHECK(mlp.keys.at("activation_checkpoint.mode") == "\"selective\"");
  CHECK(mlp.keys.at("activation_checkpoint.selective_ac_option") == "\"op\"");
  CHECK(mlp.has_note("recompute_modules=mlp"));
  const Graph long_seq = build_zoo_model("llama", parse_knob_list("size=3-8b,layers=2,batch=8,seq=8192"));
  for (const auto& [type, method] : {std::pair{"p2p", "alltoall"}, std::pair{"all_gather", "allgather"}}) {
    const Toml cp = torchtitan(long_seq, c, std::string("megatron:tp=2,pp=1,dp=2,cp=2,sp=1,cp_comm_type=") + type);
    CHECK(cp.keys.at("parallelism.context_parallel_degree") == "2");
    CHECK(cp.keys.at("parallelism.context_parallel_rotate_method") == "\"" + std::string(method) + "\"");
    CHECK(cp.keys.at("training.seq_len") == "8192");
  }
  const Graph moe = build_zoo_model("mixtral-8x7b", parse_knob_list("layers=1,batch=8"));
  const Toml ep = torchtitan(moe, c, "megatron:tp=2,pp=1,dp=4,ep=4,sp=1");
  CHECK(ep.keys.at("parallelism.expert_parallel_degree") == "4");
  CHECK(ep.keys.at("parallelism.expert_tensor_parallel_degree") == "2");
}

TEST_CASE("the torchtitan export refuses what torchtitan cannot run with one line", "[costmodel][export]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  // Tensor parallelism always splits the sequence in torchtitan: 200 tokens over tp 8 x 2 do not split.
  const Graph odd = build_zoo_model("gpt", {{"layers", "2"}, {"hidden", "512"}, {"heads", "8"}, {"seq", "200"},
                                            {"vocab", "1024"}, {"batch", "8"}, {"dtype", "bf16"}});
  try {
    export_scheme(find_export_format("torchtitan"), odd, c, make_scheme("megatron:tp=8,pp=1,dp=1", odd, c, {}));
    FAIL("exported a sequence torchtitan's sequence parallelism cannot split");
  } catch (const autoddl::InputError& e) {
    CHECK(std::string(e.what()).find("the sequence 200 does not split") != std::string::npos);
    CHECK(std::string(e.what()).find("torchtitan v0.2.2") != std::string::npos);
    CHECK(std::string(e.what()).find('\n') == std::string::npos);
  }
  // The same model on tp 4 (200 % 8 == 0) exports.
  CHECK_NOTHROW(export_scheme(find_export_format("torchtitan"), odd, c, make_scheme("megatron:tp=4,pp=1,dp=2", odd, c, {})));
  // No torchtitan model has multi-token-prediction layers; without them the model exports.
  const ClusterSpec h = resolve_cluster("dgx-h100", 1);
  const std::string knobs = "layers=8,dense_layers=1,experts=16,batch=8";
  const Graph mtp = build_zoo_model("deepseek-v3", parse_knob_list(knobs + ",mtp=1"));
  try {
    export_scheme(find_export_format("torchtitan"), mtp, h, make_scheme("megatron:tp=2,pp=4,dp=1,sp=1", mtp, h, {}));
    FAIL("exported multi-token prediction to torchtitan");
  } catch (const autoddl::InputError& e) {
    CHECK(std::string(e.what()).find("multi-token prediction") != std::string::npos);
  }
  const Graph plain = build_zoo_model("deepseek-v3", parse_knob_list(knobs));
  CHECK_NOTHROW(export_scheme(find_export_format("torchtitan"), plain, h, make_scheme("megatron:tp=2,pp=4,dp=1,sp=1", plain, h, {})));
}
