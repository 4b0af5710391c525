// Small graphs and a brute-force optimum for the search tests. The graphs are built with the
// costmodel's GraphBuilder so every op goes through the same shape and SBP rules as the zoo.
#pragma once
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/graph_builder.hpp"
#include "autoddl/costmodel/zoo.hpp"
#include "autoddl/search/assignment.hpp"
#include "autoddl/search/cost_tables.hpp"
#include "autoddl/search/searcher.hpp"

namespace search_fixtures {

using namespace autoddl::costmodel;
using namespace autoddl::search;

// The result of `method` in a run (throws, which fails the test, when the run has none).
inline const SearchResult& result_of(const SearchRun& run, const std::string& method) {
  for (const SearchResult& r : run.results) {
    if (r.method == method) return r;
  }
  throw std::runtime_error("the run has no result of " + method);
}

// x -> matmul -> relu -> matmul -> cross-entropy: 4 ops in a chain.
inline Graph chain_graph(int64_t batch = 8, int64_t in = 64, int64_t hidden = 128, int64_t out = 32) {
  GraphBuilder b("chain", "test", batch, DType::fp32);
  int x = b.input("x", {batch, in}, DType::fp32);
  int labels = b.input("labels", {batch}, DType::int64);
  int h = b.matmul("fc1", x, b.parameter("w1", {in, hidden}));
  h = b.relu("relu", h);
  h = b.matmul("fc2", h, b.parameter("w2", {hidden, out}));
  b.cross_entropy("loss", h, labels);
  return b.finish();
}

// h = x·W; y = h + relu(h): h is read by two ops (the backward gradient-sum rule).
inline Graph residual_graph(int64_t batch = 8, int64_t hidden = 64) {
  GraphBuilder b("residual", "test", batch, DType::fp32);
  int x = b.input("x", {batch, hidden}, DType::fp32);
  int labels = b.input("labels", {batch}, DType::int64);
  int h = b.matmul("fc", x, b.parameter("w", {hidden, hidden}));
  int y = b.add("add", h, b.relu("relu", h));
  b.cross_entropy("loss", y, labels);
  return b.finish();
}

// Embedding and LM head sharing one table (a tied parameter read by two ops).
inline Graph tied_graph(int64_t batch = 8, int64_t seq = 4, int64_t vocab = 32, int64_t hidden = 16) {
  GraphBuilder b("tied", "test", batch, DType::fp32);
  int tokens = b.input("tokens", {batch, seq}, DType::int64);
  int labels = b.input("labels", {batch, seq}, DType::int64);
  int table = b.parameter("table", {vocab, hidden});
  int e = b.embedding("embed", table, tokens);
  int logits = b.matmul("head", e, table, /*transpose_b=*/true);
  b.cross_entropy("loss", logits, labels);
  return b.finish();
}

inline Graph tiny_gpt(int layers = 2, int64_t batch = 8) {
  return build_zoo_model("gpt", {{"layers", std::to_string(layers)}, {"hidden", "256"}, {"heads", "8"},
                                 {"seq", "128"}, {"vocab", "1024"}, {"batch", std::to_string(batch)}});
}

// evaluate() with one gradient per bucket and the sync fully exposed, in the table's terms:
// m·T + Σ sync + the optimizer step without its one kernel launch.
inline double evaluate_as_table(const Graph& g, const ClusterSpec& c, Scheme s) {
  s.bucket_bytes = 1;
  // The tables charge the sync unhidden, so its NCCL kernels never share the SMs with the
  // backward (sm_contention.hpp): evaluate without an SM count to match.
  ClusterSpec unhidden = c;
  unhidden.gpu.sm_count = 0;
  const CostReport r = evaluate(g, unhidden, s);
  return r.iteration_s - r.grad_sync_exposed_s + r.grad_sync_s - c.gpu.launch_overhead_s;
}

inline TableOptions table_options(std::vector<int> mesh, bool zero = true) {
  TableOptions o;
  o.mesh_shape = std::move(mesh);
  o.zero_storage = zero;
  return o;
}

inline double combinations(const CostTables& t) {
  double n = 1;
  for (int i = 0; i < t.ops(); ++i) n *= t.choices(i);
  return n;
}

struct Brute {
  double best_feasible_s = std::numeric_limits<double>::infinity();  // min time with every stage in memory
  std::vector<int> best_feasible;
  double best_objective_s = std::numeric_limits<double>::infinity();  // min penalized objective
  double min_memory = std::numeric_limits<double>::infinity(), max_memory = 0;  // stage 0
};

// Every assignment, each priced from scratch (recompute_objective shares nothing with the
// incremental code or the ILP).
inline Brute brute_force(const CostTables& t) {
  Brute b;
  std::vector<int> c(t.ops(), 0);
  while (true) {
    const Objective o = recompute_objective(t, c);
    bool fits = true;
    for (int s = 0; s < t.stages(); ++s) fits = fits && o.memory_bytes[s] <= t.capacity_bytes(s);
    if (fits && o.time_s < b.best_feasible_s) {
      b.best_feasible_s = o.time_s;
      b.best_feasible = c;
    }
    b.best_objective_s = std::min(b.best_objective_s, o.total());
    b.min_memory = std::min(b.min_memory, o.memory_bytes[0]);
    b.max_memory = std::max(b.max_memory, o.memory_bytes[0]);
    int i = t.ops() - 1;
    while (i >= 0 && ++c[i] == t.choices(i)) c[i--] = 0;
    if (i < 0) break;
  }
  return b;
}

}  // namespace search_fixtures
