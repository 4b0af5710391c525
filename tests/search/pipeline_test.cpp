// The stage partition: layers are Op::block runs (embeddings join the first, the head the last),
// stages are contiguous, and the DP's slowest stage equals the best over every split by brute
// force, with each stage under its memory where some split allows it.
#include <catch2/catch.hpp>

#include <algorithm>

#include "../costmodel/input_error.hpp"
#include "autoddl/search/coordinate_descent.hpp"
#include "autoddl/search/pipeline.hpp"
#include "autoddl/search/scheme_map.hpp"
#include "fixtures.hpp"

using namespace search_fixtures;

namespace {

struct Ref {
  std::unique_ptr<CostTables> t;
  std::vector<int> choice;
};

Ref reference(const Graph& g, const ClusterSpec& c, int stages, int m) {
  TableOptions o = table_options({stages, 4});
  o.pipeline_dim = 0;
  o.micro_batches = m;
  Ref r{std::make_unique<CostTables>(g, c, o), {}};
  r.choice = make_seeds(*r.t, 0, 1).front().choice;
  Assignment a(*r.t, r.choice);
  coordinate_descent(a, make_coordinates(*r.t, false), CdOptions{});
  r.choice = a.choice();
  return r;
}

}  // namespace

TEST_CASE("layers are the runs of one block label, with embeddings first and the head last", "[search][pipeline]") {
  const Graph g = tiny_gpt(3);
  int layers = 0;
  const std::vector<int> l = layer_of_ops(g, layers);
  CHECK(layers == 3);
  CHECK(l.front() == 0);
  CHECK(l.back() == 2);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    if (g.ops[i].block == "layer.1") CHECK(l[i] == 1);
  }
}

TEST_CASE("the stage partition's slowest stage is the best of every contiguous split", "[search][pipeline]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const Graph g = tiny_gpt(7, 16);
  for (int stages : {2}) {
    const Ref ref = reference(g, c, stages, 4);
    const StagePlan plan = partition_stages(*ref.t, ref.choice, stages);
    REQUIRE(plan.fits);
    const double dp_max = *std::max_element(plan.stage_time_s.begin(), plan.stage_time_s.end());
    // Brute force over split points, with the same per-layer times the DP used.
    int layers = 0;
    const std::vector<int> layer = layer_of_ops(g, layers);
    std::vector<double> lt(layers, 0);
    for (int i = 0; i < ref.t->ops(); ++i) lt[layer[i]] += ref.t->node_s(i, ref.choice[i]);
    for (int k = 0; k < ref.t->terms(); ++k) lt[layer[ref.t->term_members(k)[1]]] += ref.t->term_cost(k, ref.choice.data());
    double best = 1e300;
    for (int cut = 1; cut < layers; ++cut) {
      double a = 0, b = 0;
      for (int l = 0; l < layers; ++l) (l < cut ? a : b) += lt[l];
      best = std::min(best, std::max(a, b));
    }
    CHECK(dp_max == Approx(best).epsilon(1e-12));
    for (size_t i = 1; i < plan.op_stage.size(); ++i) CHECK(plan.op_stage[i] >= plan.op_stage[i - 1]);
  }
}

TEST_CASE("a pipeline with more stages than layers is an input error", "[search][pipeline]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const Graph g = tiny_gpt(1, 16);
  const Ref ref = reference(g, c, 2, 2);
  auto e = input_error_of([&] { partition_stages(*ref.t, ref.choice, 8); });
  REQUIRE(e);
  CHECK(e->file() == "--mesh");
}
