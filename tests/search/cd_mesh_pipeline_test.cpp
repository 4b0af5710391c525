// cd-mesh over pipeline meshes: it enumerates [pp, sub...] meshes beside the SBP ones, returns a
// pipeline layout where one is fastest and never anything slower than the best Megatron-LM grid
// point; its mesh bounds hold for every scheme found on each mesh, so what it prunes could not
// have won (checked by searching every pruned mesh); the stage partition balances the slowest
// stage, also with v interleaved chunks, and moves layers away from the LM head's stage.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <numeric>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/search/mesh_bound.hpp"
#include "autoddl/search/mesh_candidates.hpp"
#include "autoddl/search/pipeline.hpp"
#include "autoddl/search/scheme_map.hpp"
#include "autoddl/search/searcher.hpp"
#include "fixtures.hpp"

using namespace search_fixtures;

namespace {

// cd-mesh's cases: no random restarts (the expert seeds only), under a time limit.
SearchOptions without_restarts(double time_limit_s) {
  SearchOptions o;
  o.random_restarts = 0;
  o.time_limit_s = time_limit_s;
  return o;
}

}  // namespace

TEST_CASE("cd-mesh lists pipeline meshes: pp up to the layers even where it does not divide them, node-aligned, pipeline dim 0", "[search][cd-mesh]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph g = tiny_gpt(12, 16);
  int pipelines = 0, plain = 0;
  for (const MeshCandidate& m : mesh_candidates(g, c, 16)) {
    INFO(mesh_label(m));
    CHECK(std::accumulate(m.mesh.begin(), m.mesh.end(), 1, std::multiplies<int>()) == 16);
    CHECK(m.mesh.size() <= 3);
    if (m.pipeline_dim < 0) {
      ++plain;
      continue;
    }
    ++pipelines;
    CHECK(m.pipeline_dim == 0);
    CHECK(m.mesh[0] <= 12);
    CHECK(m.mesh.size() >= 2);
  }
  CHECK(plain == 7);      // 16, 8x2, 2x8, 4x4, and the three orders of 2x2x4
  // pp 2 x (8, 2x4, 4x2), pp 4 x (4, 2x2), and pp 8 x 2: 8 stages over 12 layers is an uneven
  // split, as the Megatron grid's balanced layouts run it.
  CHECK(pipelines == 6);
  CHECK(mesh_label({{4, 2, 2}, 0}) == "pp4 x 2x2");
}

TEST_CASE("cd-mesh returns a pipeline layout where one is fastest, never slower than the best Megatron-LM point, "
          "and what it prunes could not have won",
          "[search][cd-mesh]") {
  // A 4-layer GPT on two DGX nodes: small enough to search every pruned mesh again below.
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph g = tiny_gpt(4, 16);
  const SearchOptions o = without_restarts(120);
  const SearchRun run = run_search(g, c, o, {"cd-mesh", "megatron"});
  const SearchResult& mesh = result_of(run, "cd-mesh");
  const SearchResult& mega = result_of(run, "megatron");
  REQUIRE(mega.report.feasible);
  REQUIRE(mesh.report.feasible);
  CHECK(mesh.report.iteration_s <= mega.report.iteration_s);
  CHECK(evaluate(g, c, mesh.scheme).iteration_s == mesh.report.iteration_s);
  // The fastest layout here pipelines: cd-mesh's scheme has stages.
  CHECK(mesh.scheme.stages() > 1);
  const auto& d = mesh.details;
  int pipelines_searched = 0;
  for (const auto& m : d["meshes"]) {
    pipelines_searched += m["pipeline_dim"].get<int>() == 0;
    if (m["feasible"].get<bool>()) CHECK(m["bound_s"].get<double>() <= m["iteration_s"].get<double>());
  }
  CHECK(pipelines_searched >= 2);
  CHECK(d["meshes"].size() + d["pruned"].size() <= d["meshes_total"].get<size_t>());
  REQUIRE(d["pruned"].size() >= 1);
  // Every pruned mesh, searched on its own (cd from every seed over its own configurations), is
  // no faster than what cd-mesh returned, and its bound is below what was found there.
  for (const auto& p : d["pruned"]) {
    SearchOptions on = o;
    on.mesh_shape = p["mesh"].get<std::vector<int>>();
    on.pipeline_dim = p["pipeline_dim"].get<int>();
    on.sync_weight = 1;  // no sync-weight probes: a second opinion, not the whole search again
    INFO("pruned mesh of " << on.mesh_shape.size() << " dims, pipeline dim " << on.pipeline_dim);
    const SearchRun alone = run_search(g, c, on, {"cd"});
    const SearchResult& r = result_of(alone, "cd");
    if (!r.report.feasible) continue;
    CHECK(p["bound_s"].get<double>() <= r.report.iteration_s);
    CHECK(r.report.iteration_s >= mesh.report.iteration_s);
  }
}

TEST_CASE("cd-mesh answers the same with one thread or two: meshes go in waves against the best found before them",
          "[search][cd-mesh]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph g = tiny_gpt(4, 16);
  SearchOptions o = without_restarts(600);
  const SearchRun one = run_search(g, c, o, {"cd-mesh"});
  o.jobs = 2;
  const SearchRun two = run_search(g, c, o, {"cd-mesh"});
  const SearchResult &a = result_of(one, "cd-mesh"), &b = result_of(two, "cd-mesh");
  CHECK(a.report.iteration_s == b.report.iteration_s);
  CHECK(a.note == b.note);
  const auto &da = a.details, &db = b.details;
  REQUIRE(da["meshes"].size() == db["meshes"].size());
  for (size_t i = 0; i < da["meshes"].size(); ++i) {
    CHECK(da["meshes"][i]["mesh"] == db["meshes"][i]["mesh"]);
    CHECK(da["meshes"][i]["iteration_s"] == db["meshes"][i]["iteration_s"]);
  }
  CHECK(da["pruned"] == db["pruned"]);
  CHECK(da["probe_only"] == db["probe_only"]);
  // Nothing left unexamined: every mesh searched or pruned.
  CHECK(da["not_reached"].get<int>() == 0);
  CHECK(da["meshes"].size() + da["pruned"].size() == da["meshes_total"].get<size_t>());
}

TEST_CASE("cd-mesh searches the pipeline meshes whose stages do not divide the layers and so never loses to "
          "the grid's uneven layout",
          "[search][cd-mesh]") {
  // ResNet-101 (33 residual blocks) on one DGX A100: the Megatron grid's best point is pp=2 with
  // an uneven layout=; cd-mesh once left pp=2 out (2 does not divide the blocks) and returned a
  // data-parallel scheme 4.7% slower than that grid point.
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const Graph g = build_zoo_model("resnet101", {});
  SearchOptions o;
  o.random_restarts = 0;
  const SearchRun run = run_search(g, c, o, {"cd-mesh", "megatron"});
  const SearchResult& mesh = result_of(run, "cd-mesh");
  const SearchResult& mega = result_of(run, "megatron");
  REQUIRE(mega.report.feasible);
  REQUIRE(mega.scheme.stages() == 2);  // the case this guards: the grid pipelines here
  REQUIRE(mesh.report.feasible);
  CHECK(mesh.report.iteration_s <= mega.report.iteration_s * (1 + 1e-9));
  int odd_pipelines = 0;
  int layers = 0;
  layer_of_ops(g, layers);
  for (const auto& m : mesh.details["meshes"]) {
    if (m["pipeline_dim"].get<int>() == 0) odd_pipelines += layers % m["mesh"][0].get<int>() != 0;
  }
  CHECK(odd_pipelines >= 1);
}

TEST_CASE("the stage partition gives the LM head's stage fewer layers and balances the slowest stage",
          "[search][pipeline]") {
  // A vocabulary of 262144 makes the LM head (in the last layer) as heavy as several blocks.
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const Graph g = build_zoo_model("gpt", {{"layers", "8"}, {"hidden", "256"}, {"heads", "8"}, {"seq", "128"},
                                          {"vocab", "262144"}, {"batch", "16"}});
  TableOptions o = table_options({2, 4});
  o.pipeline_dim = 0;
  o.micro_batches = 8;
  const CostTables ref(g, c, o);
  std::vector<int> choice = make_seeds(ref, 0, 1).front().choice;
  Assignment a(ref, choice);
  coordinate_descent(a, make_coordinates(ref, false), CdOptions{});
  choice = a.choice();
  int layers = 0;
  const std::vector<int> layer = layer_of_ops(g, layers);
  std::vector<double> lt(layers, 0);
  for (int i = 0; i < ref.ops(); ++i) lt[layer[i]] += ref.node_s(i, choice[i]);
  for (int k = 0; k < ref.terms(); ++k) lt[layer[ref.term_members(k)[1]]] += ref.term_cost(k, choice.data());
  // The head's layer outweighs the embedding's by more than a block: a stage gives one up for it.
  REQUIRE(lt.back() > lt.front() + lt[layers / 2]);
  for (int v : {1, 2}) {
    INFO(v << " chunk(s) per stage");
    const StagePlan plan = partition_stages(ref, choice, 2, v);
    REQUIRE(plan.fits);
    // Chunks are contiguous, non-empty, and chunk k sits on stage k % 2.
    std::vector<int> per_chunk(2 * v, 0);
    for (size_t i = 0; i < plan.op_chunk.size(); ++i) {
      if (i) CHECK(plan.op_chunk[i] >= plan.op_chunk[i - 1]);
      CHECK(plan.op_stage[i] == plan.op_chunk[i] % 2);
    }
    for (int l = 0; l < layers; ++l) {
      const int first = static_cast<int>(std::find(layer.begin(), layer.end(), l) - layer.begin());
      ++per_chunk[plan.op_chunk[first]];
    }
    for (int n : per_chunk) CHECK(n >= 1);
    // The last chunk (with the head) holds fewer layers than the first.
    CHECK(per_chunk.back() < per_chunk.front());
    // Its slowest chunk is the best over every contiguous split into 2v chunks (brute force).
    double slowest = 0;
    {
      std::vector<double> chunk_s(2 * v, 0);
      for (int l = 0; l < layers; ++l) {
        const int first = static_cast<int>(std::find(layer.begin(), layer.end(), l) - layer.begin());
        chunk_s[plan.op_chunk[first]] += lt[l];
      }
      slowest = *std::max_element(chunk_s.begin(), chunk_s.end());
    }
    double best = 1e300;
    std::vector<int> cuts(2 * v - 1);
    std::function<void(int, int)> split = [&](int k, int from) {
      if (k == 2 * v - 1) {
        double worst = 0, acc = 0;
        int c0 = 0;
        for (int l = 0; l < layers; ++l) {
          if (c0 < 2 * v - 1 && l == cuts[c0]) worst = std::max(worst, acc), acc = 0, ++c0;
          acc += lt[l];
        }
        best = std::min(best, std::max(worst, acc));
        return;
      }
      for (int cut = from; cut <= layers - (2 * v - 1 - k); ++cut) {
        cuts[k] = cut;
        split(k + 1, cut + 1);
      }
    };
    split(0, 1);
    CHECK(slowest == Approx(best).epsilon(1e-12));
    // Stage times are the sums of their chunks, the slowest no more than an equal split's.
    double equal_slowest = 0;
    for (int s = 0; s < 2; ++s) {
      double t = 0;
      for (int l = 0; l < layers; ++l) t += (l / (layers / (2 * v))) % 2 == s ? lt[l] : 0;
      equal_slowest = std::max(equal_slowest, t);
    }
    CHECK(*std::max_element(plan.stage_time_s.begin(), plan.stage_time_s.end()) <= equal_slowest * (1 + 1e-12));
  }
}
