// Per-variable sequences for the LSTM ranker (var_sequence.hpp): one row per variable in graph
// order, shard choices pooled by element share, and what tells strategies apart moves the rows.
#include "autoddl/sync/var_sequence.hpp"

#include <catch2/catch.hpp>

#include <cmath>

#include "autoddl/sync/builders.hpp"
#include "tiny.hpp"

using namespace autoddl::sync;

namespace {
size_t col(const std::string& name) {
  const auto& n = variable_feature_names();
  const auto it = std::find(n.begin(), n.end(), name);
  REQUIRE(it != n.end());
  return static_cast<size_t>(it - n.begin());
}
}  // namespace

TEST_CASE("sync sequences: one row per variable in graph order with pooled shard choices", "[sync][sequence]") {
  autoddl::costmodel::Graph g = test::tiny_model(true);
  autoddl::costmodel::ClusterSpec c = test::test_cluster(3, 2);
  const std::vector<Variable> vars = extract_variables(g);
  const size_t cols = variable_feature_names().size();
  CHECK(cols == 18 + kSequenceServers);
  const std::vector<float> ps = variable_sequence(vars, find_builder("ps").build(vars, c), c);
  const std::vector<float> ar = variable_sequence(vars, find_builder("all_reduce").build(vars, c), c);
  REQUIRE(ps.size() == vars.size() * cols);
  REQUIRE(ar.size() == ps.size());
  double shares = 0;
  for (size_t r = 0; r < vars.size(); ++r) {
    const float* p = &ps[r * cols];
    const float* a = &ar[r * cols];
    INFO(vars[r].name);
    // graph order: row r is vars[r] (its size), whatever the strategy lists first
    CHECK(p[col("log10_bytes")] == Approx(std::log10(vars[r].bytes)));
    CHECK(p[col("sparse")] == (vars[r].sparse ? 1.0f : 0.0f));
    // every shard is PS in one, all-reduce in the other: the pooled shares sum to 1
    CHECK(p[col("ps")] == Approx(1.0));
    CHECK(p[col("all_reduce")] == Approx(0.0));
    CHECK(a[col("all_reduce")] == Approx(1.0));
    double servers = 0;
    for (int k = 0; k < kSequenceServers; ++k) servers += p[col("server_" + std::to_string(k))];
    CHECK(servers == Approx(1.0));
    CHECK(a[col("server_0")] == 0.0f);
    shares += p[col("bytes_share")];
  }
  CHECK(shares == Approx(1.0));
  // The first variable is the embedding (64000 of 73640 bytes), the last fc2.bias.
  CHECK(vars.front().name == "emb.table");
  CHECK(ps[col("bytes_share")] == Approx(64000.0 / 73640.0));
}
