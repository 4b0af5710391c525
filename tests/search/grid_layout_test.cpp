// The Megatron grid on a model whose layers pp (or pp × interleave) does not divide: it tries
// that pp with Megatron-Core's --pipeline-model-parallel-layout, the work-balanced layout, rather
// than skipping it (DeepSeek-V3's 61 layers on pp=8). Each such point's spec round-trips: it
// prices the same through make_scheme and exports the layout.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "../../search/src/megatron_grid.hpp"
#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/scheme_export.hpp"
#include "fixtures.hpp"

using namespace search_fixtures;

namespace {

int spec_int(const std::string& spec, const std::string& key) {
  const size_t at = spec.find("," + key + "=");
  if (at == std::string::npos) return 1;
  return std::stoi(spec.substr(at + key.size() + 2));
}

}  // namespace

TEST_CASE("the Megatron grid tries pipeline sizes that do not divide the layers with a balanced layout",
          "[search][megatron][pipeline-layout]") {
  // 7 layers on 8 GPUs: pp = 2, 4 and 8 split them only unevenly (at pp = 8 one stage holds the
  // output layer and loss alone).
  const ClusterSpec c = resolve_cluster("dgx-h100", 1);
  const Graph g = build_zoo_model("gpt", {{"layers", "7"}, {"hidden", "1024"}, {"heads", "16"}, {"seq", "1024"},
                                          {"batch", "16"}, {"flash", "1"}});
  const MegatronGrid grid = megatron_grid(g, c, 600, 100000);
  REQUIRE_FALSE(grid.truncated);
  std::set<int> uneven_pp;
  int layouts = 0, interleaved = 0;
  for (const GridPoint& p : grid.best) {
    const std::string& spec = p.scheme.name;
    const int pp = spec_int(spec, "pp");
    if (pp < 2 || 7 % pp == 0) continue;
    INFO(spec);
    REQUIRE(spec.find(",layout=E") != std::string::npos);
    uneven_pp.insert(pp);
    ++layouts;
    if (spec.find(",interleave=") != std::string::npos) {
      ++interleaved;
      CHECK(p.scheme.virtual_stages == spec_int(spec, "interleave"));
    }
    // The point's spec prices the same when given back, and exports its layout.
    const Scheme again = make_scheme(spec, g, c, {});
    CHECK(again.op_chunk == p.scheme.op_chunk);
    CHECK(evaluate(g, c, again).iteration_s == p.report.iteration_s);
    if (layouts <= 4) {
      const std::string layout = spec.substr(spec.find(",layout=") + 8, spec.find(',', spec.find(",layout=") + 1) -
                                                                            spec.find(",layout=") - 8);
      const std::string lm = export_scheme(find_export_format("megatron-lm"), g, c, again);
      CHECK_THAT(lm, Catch::Contains("--pipeline-model-parallel-layout \"" + layout + "\""));
    }
  }
  CHECK(uneven_pp == std::set<int>{2, 4, 8});
  CHECK(interleaved > 0);  // pp=2 interleaves over 2 or 3 chunks per rank
}

TEST_CASE("the Megatron grid reaches NVIDIA's DeepSeek-V3 layout on 1024 H100 (pp=8 with interleave 4)",
          "[search][megatron][pipeline-layout]") {
  // The global batch 8 of the preset: dp <= 8, so tp * pp >= 128. The grid's best point over
  // the walk is interleaved over pp=8 with "Et|(tt|)*30L", a split 61 layers never had before.
  const ClusterSpec c = resolve_cluster("dgx-h100", 128);
  const Graph g = build_zoo_model("deepseek-v3", {});
  const MegatronGrid grid = megatron_grid(g, c, 600, 1);
  REQUIRE_FALSE(grid.truncated);
  REQUIRE(grid.best.size() == 1);
  const std::string& spec = grid.best.front().scheme.name;
  INFO(spec);
  CHECK(grid.best.front().report.feasible);
  CHECK(spec.find(",pp=8,") != std::string::npos);
  CHECK(spec.find(",interleave=4,layout=Et|(tt|)*30L") != std::string::npos);
}

TEST_CASE("the Megatron grid tries context parallelism at long sequences and cd-expert still starts from plain layouts",
          "[search][megatron][cp]") {
  // Llama 3 shapes, 2 layers, 16 H100. At sequence 8192 each rank's two causal chunks keep at
  // least 1,024 tokens up to cp = 4; at 2048 no cp is tried.
  const ClusterSpec c = resolve_cluster("dgx-h100", 2);
  const Graph g = build_zoo_model("llama", {{"size", "3-8b"}, {"layers", "2"}, {"seq", "8192"}, {"batch", "32"}});
  const MegatronGrid grid = megatron_grid(g, c, 600, 100000);
  REQUIRE_FALSE(grid.truncated);
  std::set<int> cps;
  for (const GridPoint& p : grid.best) cps.insert(spec_int(p.scheme.name, "cp"));
  CHECK(cps == std::set<int>{1, 2, 4});
  // The starts: the best plain points, then the best context-parallel one.
  const MegatronGrid few = megatron_grid(g, c, 600, 3);
  REQUIRE(few.starts.size() == 4);
  for (int k = 0; k < 3; ++k) CHECK(spec_int(few.starts[k].scheme.name, "cp") == 1);
  CHECK(spec_int(few.starts[3].scheme.name, "cp") > 1);
  const Graph short_seq = build_zoo_model("llama", {{"size", "3-8b"}, {"layers", "2"}, {"seq", "2048"}, {"batch", "32"}});
  for (const GridPoint& p : megatron_grid(short_seq, c, 600, 100000).best) CHECK(spec_int(p.scheme.name, "cp") == 1);
}

TEST_CASE("the Megatron grid is the same walked on one thread or two", "[search][grid]") {
  // The points are priced in parallel (--jobs) and offered in the walk's order, so the kept
  // points, the best per mesh and the counts do not depend on the threads.
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph g = tiny_gpt(4, 16);
  const MegatronGrid one = megatron_grid(g, c, 600, 5, 1), two = megatron_grid(g, c, 600, 5, 2);
  REQUIRE(one.points > 20);
  CHECK(one.points == two.points);
  CHECK(one.feasible == two.feasible);
  REQUIRE(one.best.size() == two.best.size());
  for (size_t i = 0; i < one.best.size(); ++i) {
    CHECK(one.best[i].scheme.name == two.best[i].scheme.name);
    CHECK(one.best[i].report.iteration_s == two.best[i].report.iteration_s);
  }
  REQUIRE(one.best_by_mesh.size() == two.best_by_mesh.size());
  for (const auto& [key, p] : one.best_by_mesh) {
    REQUIRE(two.best_by_mesh.count(key));
    CHECK(two.best_by_mesh.at(key).scheme.name == p.scheme.name);
  }
}

TEST_CASE("peak memory grows with the micro-batch at a fixed layout, so the grid skips larger micro-batches "
          "that ran out of memory",
          "[search][grid][memory]") {
  // The grid walk prices a (tp, pp, dp, ep, sp, options) layout at mb = 1, 2, 4, ... and stops
  // pricing it once every recompute mode ran out of memory: that is only exact if no larger
  // micro-batch needs less memory. Checked on dense, interleaved, sharded-optimizer,
  // context-parallel and expert-parallel layouts of 8 H100 under every recompute mode.
  const ClusterSpec c = resolve_cluster("dgx-h100", 1);
  const Graph gpt = build_zoo_model("gpt", {{"layers", "4"}, {"hidden", "2048"}, {"heads", "16"}, {"seq", "2048"},
                                            {"batch", "64"}, {"flash", "1"}});
  const Graph long_seq = build_zoo_model("llama", {{"size", "3-8b"}, {"layers", "2"}, {"seq", "8192"}, {"batch", "16"}});
  const Graph moe = build_zoo_model("mixtral-8x7b", {{"layers", "4"}, {"batch", "64"}});
  struct Layout {
    const Graph* g;
    std::string spec;  // without mb and recompute
    int per_replica;
  };
  const std::vector<Layout> layouts = {
      {&gpt, "tp=2,pp=2,dp=2,sp=1", 32},
      {&gpt, "tp=2,pp=2,dp=2,sp=1,dist_opt=1,tp_overlap=1,interleave=2,pp_overlap=1", 32},
      {&gpt, "tp=1,pp=4,dp=2", 32},
      {&long_seq, "tp=2,pp=1,dp=2,cp=2,sp=1", 8},
      {&moe, "tp=1,pp=2,dp=4,ep=4", 16},
      {&moe, "tp=2,pp=1,dp=4,ep=8,etp=1,sp=1,dist_opt=1", 16},
  };
  int grew = 0;
  for (const Layout& l : layouts) {
    for (const char* rc : {"none", "selective", "full"}) {
      double before = 0;
      for (int mb = 1; mb <= l.per_replica; mb *= 2) {
        const std::string spec = "megatron:" + l.spec + ",mb=" + std::to_string(mb) + ",recompute=" + rc;
        INFO(spec);
        const double peak = evaluate(*l.g, c, make_scheme(spec, *l.g, c, {})).peak_memory_bytes;
        CHECK(peak >= before);
        if (mb > 1) grew += peak > before;
        before = peak;
      }
    }
  }
  CHECK(grew > 0);
}
