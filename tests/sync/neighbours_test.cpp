// Neighbours of a strategy: always valid, only synchronizers change (partitioning kept), sparse
// variables stay on PS, and "every all-reduce shard in fp16" is one move away from AllReduce.
#include "autoddl/sync/neighbours.hpp"

#include <catch2/catch.hpp>

#include "autoddl/sync/builders.hpp"
#include "tiny.hpp"

using namespace autoddl::sync;

TEST_CASE("neighbours are valid strategies one move away, and reach all-fp16", "[sync][neighbours]") {
  autoddl::costmodel::Graph g = test::tiny_model(true);
  autoddl::costmodel::ClusterSpec c = test::test_cluster(3, 2);
  std::vector<Variable> vars = extract_variables(g);
  Strategy base = find_builder("parallax").build(vars, c);
  std::mt19937_64 rng(3);
  bool all_fp16 = false;
  int made = 0;
  for (int k = 0; k < 300; ++k) {
    Strategy n;
    if (!neighbour_strategy(base, vars, c, rng, n)) continue;
    ++made;
    CHECK_NOTHROW(validate_strategy(n, vars, c, "neighbour"));
    CHECK_FALSE(n == base);
    CHECK(n.builder.empty());
    REQUIRE(n.vars.size() == base.vars.size());
    bool every_ar_fp16 = true, any_ar = false;
    for (size_t v = 0; v < n.vars.size(); ++v) {
      CHECK(n.vars[v].shards == base.vars[v].shards);  // partitioning kept
      for (const Synchronizer& p : n.vars[v].parts) {
        if (n.vars[v].var == "emb.table") CHECK(p.arch == Arch::ps);  // sparse stays on PS
        if (p.arch != Arch::all_reduce) continue;
        any_ar = true;
        every_ar_fp16 = every_ar_fp16 && p.compressor == Compressor::fp16;
      }
    }
    all_fp16 = all_fp16 || (any_ar && every_ar_fp16);
  }
  CHECK(made > 100);
  CHECK(all_fp16);
}
