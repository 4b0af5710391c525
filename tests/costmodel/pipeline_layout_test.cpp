// Megatron-Core's --pipeline-model-parallel-layout as the megatron scheme's layout=: the text's
// syntax, the stages it gives, the layers it puts on each pipeline rank, and its refusals.
#include <catch2/catch.hpp>

#include <algorithm>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/megatron_layout.hpp"
#include "autoddl/costmodel/pipeline_layout.hpp"
#include "autoddl/costmodel/scheme_export.hpp"
#include "autoddl/costmodel/zoo.hpp"
#include "input_error.hpp"

using namespace autoddl::costmodel;

namespace {
int layers_in_chunk(const Graph& g, const Scheme& s, int chunk) {
  std::string last;
  int n = 0;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    if (g.ops[i].block.empty() || g.ops[i].block == last) continue;
    last = g.ops[i].block;
    n += s.op_chunk[i] == chunk ? 1 : 0;
  }
  return n;
}
}  // namespace

TEST_CASE("a pipeline layout expands repetitions and groups into stages", "[costmodel][pipeline-layout]") {
  const std::vector<std::string> ds = parse_pipeline_layout("Et*3|(tt|)*29m|L");
  REQUIRE(ds.size() == 32);
  CHECK(ds[0] == "Ettt");
  CHECK(ds[1] == "tt");
  CHECK(ds[29] == "tt");
  CHECK(ds[30] == "m");
  CHECK(ds[31] == "L");
  const std::vector<std::string> nvidia = parse_pipeline_layout("Et|(tt|)*30mL");
  REQUIRE(nvidia.size() == 32);
  CHECK(nvidia[0] == "Et");
  CHECK(nvidia[30] == "tt");
  CHECK(nvidia[31] == "mL");
  CHECK(parse_pipeline_layout("E|t|") == std::vector<std::string>{"E", "t", ""});
  CHECK(parse_pipeline_layout("((t|)*2)*2L") == std::vector<std::string>{"t", "t", "t", "t", "L"});
  // Printing folds runs and reads back to the same stages.
  for (const char* text : {"Et*3|(tt|)*29m|L", "Ett|t|(ttt|)*5tL", "E|t|t|L"}) {
    const std::vector<std::string> stages = parse_pipeline_layout(text);
    CHECK(parse_pipeline_layout(pipeline_layout_text(stages)) == stages);
  }
  CHECK(pipeline_layout_text(parse_pipeline_layout("Ettt|tt|tt|tt|tt|L")) == "Et*3|(tt|)*4L");
}

TEST_CASE("a pipeline layout with bad syntax is refused at its position", "[costmodel][pipeline-layout][bad-input]") {
  CHECK_INPUT_ERROR(parse_pipeline_layout("Et*|L"), "layout", "'*' takes a count");
  CHECK_INPUT_ERROR(parse_pipeline_layout("(tt|L"), "layout", "not closed");
  CHECK_INPUT_ERROR(parse_pipeline_layout("tt)|L"), "layout", "')' without '('");
  CHECK_INPUT_ERROR(parse_pipeline_layout("Ex|L"), "layout", "unknown symbol 'x'");
  CHECK_INPUT_ERROR(parse_pipeline_layout(""), "layout", "empty");
  CHECK_INPUT_ERROR(parse_pipeline_layout("(t*999999)*999999"), "layout", "too");
}

TEST_CASE("layout= places uneven layers on the pipeline ranks as Megatron-Core does", "[costmodel][pipeline-layout]") {
  // 10 layers on pp=4: Megatron's even split refuses them; the layout gives the first and last
  // ranks (embedding, loss) 2 layers and the middle ones 3.
  const ClusterSpec c = resolve_cluster("dgx-h100", 1);
  const Graph g = build_zoo_model("llama", parse_knob_list("size=3-8b,layers=10,batch=8"));
  CHECK_INPUT_ERROR(make_scheme("megatron:tp=2,pp=4,dp=1", g, c, {}), "pp", "layout=");
  const Scheme s = make_scheme("megatron:tp=2,pp=4,dp=1,layout=Ett|(ttt|)*2ttL", g, c, {});
  CHECK(s.stages() == 4);
  CHECK(s.virtual_stages == 1);
  CHECK(layers_in_chunk(g, s, 0) == 2);
  CHECK(layers_in_chunk(g, s, 1) == 3);
  CHECK(layers_in_chunk(g, s, 2) == 3);
  CHECK(layers_in_chunk(g, s, 3) == 2);
  CHECK(s.op_chunk.front() == 0);           // the embedding
  CHECK(s.op_chunk.back() == 3);            // the loss
  const CostReport r = evaluate(g, c, s);
  CHECK(r.feasible);
  // An even layout in layout= is the even split.
  const Graph g8 = build_zoo_model("llama", parse_knob_list("size=3-8b,layers=8,batch=8"));
  const Scheme even = make_scheme("megatron:tp=2,pp=4,dp=1,interleave=2", g8, c, {});
  const Scheme spelled = make_scheme("megatron:tp=2,pp=4,dp=1,layout=Et|(t|)*6tL", g8, c, {});
  CHECK(spelled.virtual_stages == 2);
  CHECK(spelled.op_chunk == even.op_chunk);
  CHECK(evaluate(g8, c, spelled).iteration_s == Approx(evaluate(g8, c, even).iteration_s));
}

TEST_CASE("layout= is refused where it does not fit the model or the pipeline", "[costmodel][pipeline-layout][bad-input]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 1);
  const Graph g = build_zoo_model("llama", parse_knob_list("size=3-8b,layers=10,batch=8"));
  CHECK_INPUT_ERROR(make_scheme("megatron:tp=2,pp=4,dp=1,layout=Ett|(ttt|)*2tL", g, c, {}), "layout",
                    "places 9 layers (t) but");
  CHECK_INPUT_ERROR(make_scheme("megatron:tp=2,pp=4,dp=1,layout=Ett|ttt|tttttL", g, c, {}), "layout",
                    "3 stages, not a multiple of pp = 4");
  CHECK_INPUT_ERROR(make_scheme("megatron:tp=2,pp=4,dp=1,interleave=2,layout=Ett|(ttt|)*2ttL", g, c, {}), "layout",
                    "pp*interleave = 8");
  CHECK_INPUT_ERROR(make_scheme("megatron:tp=2,pp=4,dp=1,layout=tt|E(ttt|)*2ttL", g, c, {}), "layout",
                    "E (the embedding) must open the first stage");
  CHECK_INPUT_ERROR(make_scheme("megatron:tp=2,pp=4,dp=1,layout=Ett|(ttt|)*2tLt", g, c, {}), "layout",
                    "L (the output layer and loss) must close the last stage");
  CHECK_INPUT_ERROR(make_scheme("megatron:tp=2,pp=4,dp=1,layout=Ett|tttL|ttt|tt", g, c, {}), "layout",
                    "(it is in stage 2 of 4)");
  CHECK_INPUT_ERROR(make_scheme("megatron:tp=2,pp=4,dp=1,layout=Ett|ttt|tttm|ttL", g, c, {}), "layout",
                    "multi-token-prediction");
  CHECK_INPUT_ERROR(make_scheme("megatron:tp=8,pp=1,dp=1,layout=EttL", g, c, {}), "layout", "needs pp > 1");
}

TEST_CASE("an uneven layout is a Megatron layout and exports as --pipeline-model-parallel-layout",
          "[costmodel][pipeline-layout]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 1);
  const Graph g = build_zoo_model("llama", parse_knob_list("size=3-8b,layers=10,batch=8"));
  const Scheme s = make_scheme("megatron:tp=2,pp=4,dp=1,layout=Ett|(ttt|)*2ttL", g, c, {});
  CHECK(layout_of_op_chunks(g, s.op_chunk, 4) == "Ett|t*3|t*3|ttL");
  const MegatronMatch m = match_megatron_layout(g, c, s);
  REQUIRE(m.layout);
  CHECK(m.layout->pipeline_layout == "Ett|t*3|t*3|ttL");
  CHECK(make_scheme(m.layout->spec, g, c, {}).op_chunk == s.op_chunk);
  const std::string lm = export_scheme(find_export_format("megatron-lm"), g, c, s);
  CHECK_THAT(lm, Catch::Contains("--pipeline-model-parallel-layout \"Ett|t*3|t*3|ttL\"\n"));
  CHECK_THAT(lm, !Catch::Contains("--num-virtual-stages-per-pipeline-rank"));
  const std::string bridge = export_scheme(find_export_format("megatron-bridge"), g, c, s);
  CHECK_THAT(bridge, Catch::Contains("cfg.model.pipeline_model_parallel_layout = \"Ett|t*3|t*3|ttL\"\n"));
}

TEST_CASE("the work-balanced layout puts the loss stage's layers elsewhere and reaches NVIDIA's DeepSeek-V3 layout",
          "[costmodel][pipeline-layout]") {
  // DeepSeek-V3: 61 layers over pp=8 x interleave=4. The output layer and loss weigh more than a
  // layer (a 129,280-word vocabulary), the embedding next to nothing: the last stage holds L
  // alone and the one light stage is the first, as NVIDIA's recipe has it.
  const Graph ds = build_zoo_model("deepseek-v3", {});
  const std::vector<std::string> stages = balanced_pipeline_layout(ds, 32);
  CHECK(pipeline_layout_text(stages) == "Et|(tt|)*30L");
  CHECK(balanced_pipeline_load(ds, 32) == Approx(2.0).epsilon(0.01));
  // The error for an uneven split without layout= suggests that layout.
  const ClusterSpec c128 = resolve_cluster("dgx-h100", 128);
  CHECK_INPUT_ERROR(make_scheme("megatron:tp=2,pp=8,dp=64,interleave=4,ep=64,etp=1,sp=1",
                                build_zoo_model("deepseek-v3", parse_knob_list("batch=8192")), c128, {}),
                    "pp", "layout=Et|(tt|)*30L");
  // A 10-layer Llama over 4 stages: every layer placed, E first, L last, stages 1 layer apart
  // at most apart from the loss stage's share.
  const Graph g = build_zoo_model("llama", parse_knob_list("size=3-8b,layers=10,batch=8"));
  const std::vector<std::string> four = balanced_pipeline_layout(g, 4);
  REQUIRE(four.size() == 4);
  CHECK(four.front().front() == 'E');
  CHECK(four.back().back() == 'L');
  size_t layers = 0;
  for (const std::string& s : four) layers += static_cast<size_t>(std::count(s.begin(), s.end(), 't'));
  CHECK(layers == 10);
  const ClusterSpec c = resolve_cluster("dgx-h100", 1);
  const Scheme s = make_scheme("megatron:tp=2,pp=4,dp=1,layout=" + pipeline_layout_text(four), g, c, {});
  CHECK(layout_of_op_chunks(g, s.op_chunk, 4) == pipeline_layout_text(four));
  // More stages than the layers can fill: none.
  CHECK(balanced_pipeline_layout(g, 16).empty());
  CHECK(balanced_pipeline_load(g, 16) == 0);
}
