// Model zoo: every model builds and finalizes with its defaults; parameter counts and FLOPs
// match the published figures within 2% (exact counts where the reference implementation
// gives one); knob overrides reach the graph; each bad knob names the flag and the knob.
#include "autoddl/costmodel/zoo.hpp"

#include <catch2/catch.hpp>
#include <chrono>
#include <set>

#include "input_error.hpp"

using namespace autoddl::costmodel;
using KnobMap = std::map<std::string, std::string>;

namespace {
// Multiply-accumulates per sample of the matmuls and convolutions (the figure papers quote).
double macs_per_sample(const Graph& g) {
  double flops = 0;
  for (const Op& op : g.ops) {
    if (op.kind == OpKind::matmul || op.kind == OpKind::conv2d) flops += op.work.fwd_flops;
  }
  return flops / 2 / static_cast<double>(g.batch);
}

int64_t params_without_prefix(const Graph& g, const std::string& prefix) {
  int64_t n = 0;
  for (const Tensor& t : g.tensors) {
    if (t.role == TensorRole::parameter && t.name.rfind(prefix, 0) != 0) n += t.elements();
  }
  return n;
}

// Megatron-LM's forward FLOPs of a GPT iteration (Narayanan et al. 2021, eq. 3, divided by
// 3 for the forward pass): 24·B·s·l·h²·(1 + s/(6h) + V/(12·h·l)).
double megatron_forward_flops(double B, double s, double l, double h, double V) {
  return 24 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * h * l));
}

const KnobMap kGpt2Xl = {{"layers", "48"}, {"hidden", "1600"}, {"heads", "25"}};
const KnobMap kGpt3 = {{"layers", "96"}, {"hidden", "12288"}, {"heads", "96"}, {"seq", "2048"}};
}  // namespace

TEST_CASE("every zoo model builds with its default knobs into a finalized graph", "[zoo]") {
  std::set<std::string> names;
  for (const ZooModel& m : zoo_models()) {
    INFO(m.name);
    names.insert(std::string(m.name));
    Graph g = build_zoo_model(m.name, {});
    CHECK(g.name == m.name);
    CHECK(g.source == "zoo:" + std::string(m.name));
    CHECK(g.parameter_count() > 0);
    CHECK(g.forward_flops() > 0);
    CHECK(g.backward_flops() > g.forward_flops());
    REQUIRE(g.consumers.size() == g.tensors.size());
    for (const KnobSpec& k : m.knobs) {
      if (k.name == "batch") CHECK(g.batch == std::stoll(k.default_value));
    }
    for (const Tensor& t : g.tensors) {
      if (t.role == TensorRole::activation) CHECK(t.producer >= 0);
    }
    // a rebuilt graph passes finalize again unchanged
    Graph again = g;
    again.finalize();
    CHECK(again.forward_flops() == g.forward_flops());
  }
  CHECK(names == std::set<std::string>{"mlp", "vgg16", "resnet50", "bert", "gpt", "ncf",
                                       "resnet101", "densenet121", "inception_v3", "llama",
                                       "mixtral-8x7b", "mixtral-8x22b", "qwen3-30b-a3b", "qwen3-235b-a22b",
                                       "gpt-oss-120b", "deepseek-v3", "grok-1"});
}

TEST_CASE("VGG16 has 138.36 M parameters and 15.5 G multiply-accumulates per 224x224 image",
          "[zoo][published]") {
  Graph g = build_zoo_model("vgg16", {});
  CHECK(g.parameter_count() == 138357544);  // torchvision vgg16
  CHECK(static_cast<double>(g.parameter_count()) == Approx(138.36e6).epsilon(0.02));
  CHECK(macs_per_sample(g) == Approx(15.5e9).epsilon(0.02));
  CHECK(g.forward_flops_per_sample() == Approx(31e9).epsilon(0.02));
}

TEST_CASE("ResNet-50 has 25.6 M parameters and 4.1 G multiply-accumulates per 224x224 image",
          "[zoo][published]") {
  Graph g = build_zoo_model("resnet50", {});
  CHECK(g.parameter_count() == 25557032);  // torchvision resnet50
  CHECK(static_cast<double>(g.parameter_count()) == Approx(25.6e6).epsilon(0.02));
  CHECK(macs_per_sample(g) == Approx(4.1e9).epsilon(0.02));
  CHECK(g.forward_flops_per_sample() == Approx(8.2e9).epsilon(0.02));
}

// The CNNs of AutoSync's and AutoDist's evaluations (ResNet-101, DenseNet-121, Inception-v3).
// Published figures: torchvision's model table (pytorch.org/vision/stable/models.html) lists
// params 44,549,160 / 7,978,856 / 27,161,264 and "GFLOPS" (fvcore multiply-accumulates)
// 7.80 / 2.83 / 5.71; Inception-v3's count includes the AuxLogits head (3,326,696 parameters:
// 1x1 conv 768->128, 5x5 conv 128->768, their BatchNorms, fc 768->1000), which the zoo leaves out.
TEST_CASE("ResNet-101 has 44.55 M parameters and 7.8 G multiply-accumulates per 224x224 image",
          "[zoo][published]") {
  Graph g = build_zoo_model("resnet101", {});
  CHECK(g.parameter_count() == 44549160);  // torchvision resnet101
  CHECK(macs_per_sample(g) == Approx(7.80e9).epsilon(0.02));
}

TEST_CASE("DenseNet-121 has 7.98 M parameters and 2.83 G multiply-accumulates per 224x224 image",
          "[zoo][published]") {
  Graph g = build_zoo_model("densenet121", {});
  CHECK(g.parameter_count() == 7978856);  // torchvision densenet121
  CHECK(macs_per_sample(g) == Approx(2.83e9).epsilon(0.02));
}

TEST_CASE("Inception-v3 has 23.83 M parameters and 5.71 G multiply-accumulates per 299x299 image",
          "[zoo][published]") {
  Graph g = build_zoo_model("inception_v3", {});
  CHECK(g.parameter_count() == 27161264 - 3326696);  // torchvision inception_v3 less AuxLogits
  CHECK(macs_per_sample(g) == Approx(5.71e9).epsilon(0.02));
  // the factorized 1x7 convolution keeps its parameters: 128 -> 128 channels, 7 taps
  int64_t w = -1;
  for (const Tensor& t : g.tensors) {
    if (t.name == "Mixed_6b.branch7x7_2.conv.weight") w = t.elements();
  }
  CHECK(w == 128 * 128 * 7);
}

TEST_CASE("BERT-large has about 335 M parameters with the pooler", "[zoo][published]") {
  Graph g = build_zoo_model("bert", {{"size", "large"}, {"vocab_pad", "1"}});
  // encoder + embeddings + pooler, without the pre-training heads: HF BertModel(bert-large)
  CHECK(params_without_prefix(g, "cls.") == 335141888);
  CHECK(static_cast<double>(g.parameter_count()) == Approx(335e6).epsilon(0.02));
}

TEST_CASE(
    "BERT-base with its pre-training heads has HF BertForPreTraining's 110,106,428 parameters",
    "[zoo][published]") {
  Graph g = build_zoo_model("bert", {{"vocab_pad", "1"}});
  CHECK(g.parameter_count() == 110106428);
}

TEST_CASE("GPT-2 small by default and GPT-2 XL with knobs have 124 M and 1.56 B parameters",
          "[zoo][published]") {
  CHECK(build_zoo_model("gpt", {{"vocab_pad", "1"}}).parameter_count() == 124439808);  // HF gpt2
  KnobMap xl_exact = kGpt2Xl;
  xl_exact["vocab_pad"] = "1";
  CHECK(build_zoo_model("gpt", xl_exact).parameter_count() == 1557611200);  // HF gpt2-xl
  // Megatron-style padding (default 128) adds 47 rows: 50304 x 768 more for GPT-2 small.
  CHECK(build_zoo_model("gpt", {}).parameter_count() == 124439808 + 47 * 768);
  Graph xl = build_zoo_model("gpt", kGpt2Xl);
  CHECK(static_cast<double>(xl.parameter_count()) == Approx(1.56e9).epsilon(0.02));
}

TEST_CASE(
    "GPT-3 175B (96 x 12288, seq 2048) has 174.6 B parameters and builds in well under a second",
    "[zoo][published]") {
  auto t0 = std::chrono::steady_clock::now();
  Graph g = build_zoo_model("gpt", kGpt3);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(static_cast<double>(g.parameter_count()) == Approx(174.6e9).epsilon(0.02));
  CHECK(seconds < 0.5);
}

TEST_CASE("GPT forward FLOPs match Megatron-LM's formula within 2%", "[zoo][published]") {
  for (const KnobMap& knobs : {KnobMap{}, kGpt2Xl, kGpt3}) {
    Graph g = build_zoo_model("gpt", knobs);
    auto get = [&](const char* k, double dflt) {
      return knobs.count(k) ? std::stod(knobs.at(k)) : dflt;
    };
    double expected =
        megatron_forward_flops(8, get("seq", 1024), get("layers", 12), get("hidden", 768), 50257);
    INFO("layers " << get("layers", 12));
    CHECK(g.forward_flops() == Approx(expected).epsilon(0.02));
    // backward ≈ 2x forward: the 6·N·T rule
    CHECK(g.backward_flops() == Approx(2 * g.forward_flops()).epsilon(0.02));
    // The model FLOPs (the products only, Megatron-LM's convention) are the formula's, with the
    // unfused attention core and with the causal fused one alike.
    for (const char* flash : {"0", "1"}) {
      KnobMap k = knobs;
      k["flash"] = flash;
      INFO("flash=" << flash);
      CHECK(build_zoo_model("gpt", k).model_forward_flops(FlopsConvention::megatron) == Approx(expected).epsilon(0.005));
    }
  }
}

TEST_CASE("NCF has the NeuMF parameter count of its embeddings and towers", "[zoo]") {
  Graph g = build_zoo_model("ncf", {});
  int64_t users = 6040, items = 3706, f = 8;
  int64_t expected = (users + items) * f + (users + items) * 128 + (256 * 128 + 128) +
                     (128 * 64 + 64) + ((f + 64) * 1 + 1);
  CHECK(g.parameter_count() == expected);
  Graph g64 = build_zoo_model("ncf", {{"factors", "64"}});
  CHECK(g64.parameter_count() - g.parameter_count() == (users + items) * 56 + 56);
}

TEST_CASE("knob overrides change the built graph", "[zoo][knobs]") {
  SECTION("layers and hidden set the MLP's size") {
    Graph g = build_zoo_model("mlp", {{"layers", "3"}, {"hidden", "64"}});
    CHECK(g.parameter_count() == 3 * (64 * 64 + 64));
    CHECK(g.ops.size() == 3 * 2 + 2 + 1);  // 3 x (matmul, bias) + 2 relu + loss
  }
  SECTION("batch scales whole-batch FLOPs but not FLOPs per sample") {
    Graph a = build_zoo_model("resnet50", {});
    Graph b = build_zoo_model("resnet50", {{"batch", "64"}});
    CHECK(b.batch == 64);
    CHECK(b.forward_flops() == Approx(2 * a.forward_flops()));
    CHECK(b.forward_flops_per_sample() == Approx(a.forward_flops_per_sample()));
  }
  SECTION("dtype sets the bytes of every parameter") {
    Graph fp16 = build_zoo_model("gpt", {{"layers", "2"}});
    Graph fp32 = build_zoo_model("gpt", {{"layers", "2"}, {"dtype", "fp32"}});
    CHECK(fp32.parameter_count() == fp16.parameter_count());
    CHECK(fp32.parameter_bytes() == 2 * fp16.parameter_bytes());
  }
  SECTION("classes sets the classifier's width") {
    Graph g = build_zoo_model("vgg16", {{"classes", "10"}});
    CHECK(g.tensors[g.find_tensor("fc8.weight")].shape == Shape{4096, 10});
  }
  SECTION("bert size picks layers/hidden/heads and explicit knobs override it") {
    Graph large = build_zoo_model("bert", {{"size", "large"}});
    Graph six = build_zoo_model("bert", {{"size", "large"}, {"layers", "6"}});
    CHECK(large.find_op("layer.23.attn.scores") >= 0);
    CHECK(large.find_op("layer.24.attn.scores") < 0);
    CHECK(six.find_op("layer.5.attn.scores") >= 0);
    CHECK(six.find_op("layer.6.attn.scores") < 0);
    CHECK(six.tensors[six.find_tensor("embeddings.word")].shape == Shape{30592, 1024});  // 30522 padded to 128
  }
  SECTION("gpt heads set the attention score shape") {
    Graph g = build_zoo_model("gpt", {{"layers", "1"}, {"heads", "8"}, {"seq", "64"}});
    CHECK(g.tensors[g.find_tensor("layer.0.attn.scores")].shape == Shape{8, 8, 64, 64});
  }
}

TEST_CASE("repeated blocks carry their block label", "[zoo]") {
  auto blocks = [](const Graph& g) {
    std::set<std::string> b;
    for (const Op& op : g.ops) {
      if (!op.block.empty()) b.insert(op.block);
    }
    return b;
  };
  CHECK(blocks(build_zoo_model("gpt", {{"layers", "3"}})) ==
        std::set<std::string>{"layer.0", "layer.1", "layer.2"});
  CHECK(blocks(build_zoo_model("resnet50", {})).size() == 16);  // 3 + 4 + 6 + 3 bottlenecks
  CHECK(blocks(build_zoo_model("vgg16", {})) ==
        std::set<std::string>{"stage.1", "stage.2", "stage.3", "stage.4", "stage.5"});
  Graph g = build_zoo_model("gpt", {{"layers", "2"}});
  const Op& op = g.ops[g.find_op("layer.1.ffn.fc1")];
  CHECK(op.block == "layer.1");
  CHECK(g.ops[g.find_op("lm_head")].block.empty());
}

TEST_CASE("the GPT LM head reads the token embedding transposed (tied weights)", "[zoo]") {
  Graph g = build_zoo_model("gpt", {{"layers", "1"}});
  const Op& head = g.ops[g.find_op("lm_head")];
  CHECK(head.attrs.transpose_b);
  CHECK(head.inputs[1] == g.find_tensor("embeddings.token"));
  CHECK(g.consumers[g.find_tensor("embeddings.token")].size() == 2);
}

TEST_CASE("an unknown model names --model and lists the known ones", "[zoo][bad-input]") {
  auto e = input_error_of([] { build_zoo_model("alexnet", {}); });
  REQUIRE(e);
  CHECK(e->file() == "--model");
  CHECK(e->field() == "");
  CHECK(e->reason() == "unknown model 'alexnet' (known: mlp, vgg16, resnet50, bert, gpt, ncf, "
                     "resnet101, densenet121, inception_v3, llama, mixtral-8x7b, mixtral-8x22b, "
                     "qwen3-30b-a3b, qwen3-235b-a22b, gpt-oss-120b, deepseek-v3, grok-1)");
}

TEST_CASE("an unknown knob names --set and the knob, and lists the model's knobs",
          "[zoo][bad-input]") {
  auto e = input_error_of([] { build_zoo_model("gpt", {{"foo", "1"}}); });
  REQUIRE(e);
  CHECK(e->file() == "--set");
  CHECK(e->field() == "foo");
  CHECK(e->reason() ==
        "unknown knob for gpt (knobs: layers, hidden, heads, seq, vocab, vocab_pad, heads_pad, flash, batch, dtype)");
}

TEST_CASE("bad knob values name the knob and say why", "[zoo][bad-input]") {
  struct Case {
    const char* model;
    KnobMap knobs;
    const char* field;
    const char* reason;
  };
  const Case cases[] = {
      {"gpt", {{"layers", "abc"}}, "layers", "must be an integer (got 'abc')"},
      {"gpt", {{"layers", "2.5"}}, "layers", "must be an integer (got '2.5')"},
      {"gpt", {{"hidden", "0"}}, "hidden", "must be at least 1 (got 0)"},
      {"mlp", {{"batch", "-4"}}, "batch", "must be at least 1 (got -4)"},
      {"gpt",
       {{"seq", "99999999999999999999"}},
       "seq",
       "must be an integer in [1, 16777216] (got '99999999999999999999')"},
      {"gpt", {{"heads", "10"}}, "heads", "must divide hidden (768 % 10 != 0)"},
      {"bert",
       {{"size", "large"}, {"heads", "12"}, {"hidden", "1000"}},
       "heads",
       "must divide hidden (1000 % 12 != 0)"},
      {"bert", {{"size", "huge"}}, "size", "must be base or large (got 'huge')"},
      {"vgg16", {{"image", "16"}}, "image", "must be at least 32 (got 16)"},
      {"ncf",
       {{"dtype", "fp4"}},
       "dtype",
       "unknown dtype 'fp4' (known: fp32, fp16, bf16, fp8, int32, int64)"},
      {"resnet50",
       {{"dtype", "int32"}},
       "dtype",
       "must be a floating-point type (fp32, fp16, bf16 or fp8), not int32"},
  };
  for (const Case& c : cases) {
    INFO(c.model << " " << c.knobs.begin()->first << "=" << c.knobs.begin()->second);
    auto e = input_error_of([&] { build_zoo_model(c.model, c.knobs); });
    REQUIRE(e);
    CHECK(e->file() == "--set");
    CHECK(e->field() == c.field);
    CHECK(e->reason() == c.reason);
  }
}

TEST_CASE("knob text given to --set parses into knobs, with spaces around items allowed",
          "[zoo][knobs]") {
  CHECK(parse_knob_list("") == KnobMap{});
  CHECK(parse_knob_list("layers=2, hidden = 64") == KnobMap{{"layers", "2"}, {"hidden", "64"}});
  CHECK(parse_knob_list("size=large") == KnobMap{{"size", "large"}});
}

TEST_CASE("malformed --set text names --set and the problem", "[zoo][bad-input]") {
  const std::pair<const char*, const char*> cases[] = {
      {"layers", "expected key=value, got 'layers' in 'layers'"},
      {"=3", "missing knob name before '=' in '=3'"},
      {"layers=", "missing value for knob 'layers'"},
      {"a=1,,b=2", "empty item in 'a=1,,b=2' (expected key=value,...)"},
      {"a=1,", "empty item in 'a=1,' (expected key=value,...)"},
      {"a=1,a=2", "knob 'a' is given twice"},
  };
  for (const auto& [text, reason] : cases) {
    INFO(text);
    auto e = input_error_of([&] { parse_knob_list(text); });
    REQUIRE(e);
    CHECK(e->file() == "--set");
    CHECK(e->field() == "");
    CHECK(e->reason() == reason);
  }
}

TEST_CASE("Llama 2 and 3 sizes have exactly the released checkpoints' parameter counts", "[zoo][published][llama]") {
  // Hugging Face's meta-llama/* checkpoints (sum of every tensor's elements).
  const std::pair<const char*, int64_t> sizes[] = {
      {"2-7b", 6738415616},  {"2-13b", 13015864320},  {"2-70b", 68976648192},
      {"3-8b", 8030261248},  {"3-70b", 70553706496},  {"3-405b", 405853388800},
      // meta-llama/Llama-3.1-8B, -70B, -405B: Llama 3's shapes, the same counts.
      {"3.1-8b", 8030261248}, {"3.1-70b", 70553706496}, {"3.1-405b", 405853388800},
  };
  for (const auto& [size, params] : sizes) {
    INFO(size);
    CHECK(build_zoo_model("llama", {{"size", size}, {"seq", "128"}}).parameter_count() == params);
  }
}

TEST_CASE("Llama's blocks: RMSNorm without beta, grouped K/V, SwiGLU, no dropout, untied head", "[zoo][llama]") {
  const Graph g = build_zoo_model("llama", {{"size", "3-8b"}, {"layers", "2"}, {"seq", "256"}, {"batch", "2"}});
  int norms = 0, silu = 0, dropout = 0, attention = 0;
  for (const Op& op : g.ops) {
    if (op.kind == OpKind::layer_norm) {
      ++norms;
      CHECK(op.inputs.size() == 2);  // gamma only
    }
    if (op.kind == OpKind::unary) {
      silu += op.attrs.unary == UnaryFn::silu;
      dropout += op.attrs.unary == UnaryFn::dropout;
    }
    if (op.kind == OpKind::attention) {
      ++attention;
      CHECK(g.tensors[op.inputs[0]].shape == Shape{2, 32, 256, 128});  // 32 query heads
      CHECK(g.tensors[op.inputs[1]].shape == Shape{2, 8, 256, 128});   // 8 K/V heads
    }
  }
  CHECK(norms == 2 * 2 + 1);
  CHECK(silu == 2);
  CHECK(dropout == 0);
  CHECK(attention == 2);  // flash is Llama's default
  int embedding_sized = 0;
  for (const Tensor& t : g.tensors) {
    if (t.role == TensorRole::parameter && t.elements() == 128256LL * 4096) ++embedding_sized;
  }
  CHECK(embedding_sized == 2);  // token table and LM head, not tied
  // The eager core repeats each K/V head for its 4 query heads, FLOPs per query head as fused.
  const Graph eager = build_zoo_model("llama", {{"size", "3-8b"}, {"layers", "2"}, {"seq", "256"}, {"batch", "2"}, {"flash", "0"}});
  for (const Op& op : eager.ops) {
    if (op.kind == OpKind::matmul && op.name.find("attn.scores") != std::string::npos) {
      CHECK(eager.tensors[op.inputs[1]].shape == Shape{2, 32, 256, 128});
    }
  }
  CHECK_THROWS_AS(build_zoo_model("llama", {{"heads", "32"}, {"kv_heads", "5"}}), autoddl::InputError);
  CHECK_THROWS_AS(build_zoo_model("llama", {{"size", "4-1t"}}), autoddl::InputError);
}
