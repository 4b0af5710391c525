// Pins the cost tables against the cost model they summarize: with gradient sync fully charged
// and unbucketed, the table objective of any assignment is evaluate()'s iteration time, and the
// table memory is evaluate()'s parameter plus activation memory; the incremental objective equals a recomputation
// from scratch after random single, joint and tied moves. Interleaved tables (v chunks per stage)
// map the expert back exactly, hold its in-flight activations and price the bubble.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "autoddl/costmodel/activation_memory.hpp"
#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/search/coordinate_descent.hpp"
#include "autoddl/search/scheme_map.hpp"
#include "fixtures.hpp"

using namespace search_fixtures;

namespace {

// Whether an op keeps an activation that it reads in a smaller layout than its producer wrote
// (where evaluate() keeps the smaller copy and the tables the producer's).
bool keeper_reads_smaller(const Graph& g, const Scheme& s) {
  const ActivationFactors af = activation_factors(g, s.recompute);
  const std::vector<int> shape = s.sbp_shape();
  for (size_t i = 0; i < g.ops.size(); ++i) {
    for (size_t k = 0; k < g.ops[i].inputs.size(); ++k) {
      const int t = g.ops[i].inputs[k];
      const int p = g.tensors[t].producer;
      if (p < 0 || !(af.saves_input[i] & (1u << k))) continue;
      int o = 0;
      while (g.ops[p].outputs[o] != t) ++o;
      if (local_bytes(s.op_sigs[i].in[k], shape.data(), 1.0) < local_bytes(s.op_sigs[p].out[o], shape.data(), 1.0)) {
        return true;
      }
    }
  }
  return false;
}

std::vector<int> random_choice(const CostTables& t, std::mt19937_64& rng) {
  std::vector<int> c(t.ops());
  for (int i = 0; i < t.ops(); ++i) c[i] = static_cast<int>(rng() % t.choices(i));
  return c;
}

}  // namespace

TEST_CASE("the table objective of any assignment is evaluate's iteration time with sync unhidden",
          "[search][tables]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph g = tiny_gpt();
  std::mt19937_64 rng(7);
  for (auto [m, rc] : {std::pair{1, Recompute::none}, std::pair{2, Recompute::selective}, std::pair{4, Recompute::full}}) {
    TableOptions o = table_options({2, 8}, /*zero=*/false);
    o.micro_batches = m;
    o.recompute = rc;
    const CostTables t(g, c, o);
    std::vector<std::vector<int>> choices;
    for (const Seed& s : make_seeds(t, 3, 11)) choices.push_back(s.choice);
    for (const auto& ch : choices) {
      INFO("micro-batches " << m << ", recompute " << recompute_name(rc));
      const Objective obj = recompute_objective(t, ch);
      CHECK(obj.time_s == Approx(evaluate_as_table(g, c, to_scheme(t, ch, "x"))).epsilon(1e-9));
      if (rc == Recompute::full) continue;  // full recompute keeps one block: the table averages blocks
      // Memory without the transient gather of a tied weight (the search leaves that to a retry
      // with a lower capacity). The tables charge an activation at its producer's layout;
      // evaluate() keeps it at the smaller of that and the layout its keeper reads it in (a
      // partial sum reduce-scattered into a LayerNorm is kept as the shard), which pairs two
      // ops' choices: the tables bound it from above, and equal it when no keeper reads smaller.
      const Scheme sch = to_scheme(t, ch, "x");
      const CostReport r = evaluate(g, c, sch);
      CHECK(obj.memory_bytes[0] >= (r.param_memory_bytes + r.activation_memory_bytes) * (1 - 1e-9));
      if (!keeper_reads_smaller(g, sch)) {
        CHECK(obj.memory_bytes[0] == Approx(r.param_memory_bytes + r.activation_memory_bytes).epsilon(1e-9));
        CHECK(obj.memory_bytes[0] <= r.peak_memory_bytes);
      }
    }
  }
}

TEST_CASE("ZeRO-stored parameters cost a gather forward and backward, as evaluate prices them", "[search][tables]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const Graph g = chain_graph(16, 256, 512, 64);
  const CostTables t(g, c, table_options({8}));
  std::vector<int> zero;
  for (const Seed& s : make_seeds(t, 0, 1)) {
    if (s.name == "zero3") zero = s.choice;
  }
  REQUIRE(!zero.empty());
  const Scheme s = to_scheme(t, zero, "zero3");
  CHECK(s.regather_in_backward);
  CHECK(recompute_objective(t, zero).time_s == Approx(evaluate_as_table(g, c, s)).epsilon(1e-9));
  // The same signatures replicated are cheaper in time: gathering is not free.
  std::vector<int> dp;
  for (const Seed& x : make_seeds(t, 0, 1)) {
    if (x.name == "dp") dp = x.choice;
  }
  CHECK(recompute_objective(t, dp).time_s < recompute_objective(t, zero).time_s);
}

TEST_CASE("identical transformer layers share one op class", "[search][tables]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const Graph g2 = tiny_gpt(2), g6 = tiny_gpt(6);
  const CostTables two(g2, c, table_options({8}));
  const CostTables six(g6, c, table_options({8}));
  CHECK(six.ops() > two.ops());
  CHECK(six.classes() == two.classes());
}

TEST_CASE("the incremental objective equals a from-scratch recomputation after random moves", "[search][tables]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph g = tiny_gpt(3);
  for (const auto& mesh : {std::vector<int>{2, 8}, std::vector<int>{16}}) {
    TableOptions o = table_options(mesh);
    o.memory_capacity_bytes = 0.6e9;  // tight, so the memory penalty moves too
    const CostTables t(g, c, o);
    std::mt19937_64 rng(3);
    Assignment a(t, random_choice(t, rng));
    const Coordinates tied = make_coordinates(t, true);
    REQUIRE(tied.tied_groups > 0);
    for (int step = 0; step < 3000; ++step) {
      if (step % 3 == 0) {  // a tied coordinate: all layers' ops at one position together
        const int k = static_cast<int>(rng() % tied.size());
        const int n = tied.op_begin[k + 1] - tied.op_begin[k];
        std::vector<int> cs(n, static_cast<int>(rng() % t.choices(tied.ops[tied.op_begin[k]])));
        const int nt = tied.term_begin[k + 1] - tied.term_begin[k];
        const double before = a.objective();
        const double d = a.delta(&tied.ops[tied.op_begin[k]], cs.data(), n, &tied.terms[tied.term_begin[k]], nt);
        a.move(&tied.ops[tied.op_begin[k]], cs.data(), n, &tied.terms[tied.term_begin[k]], nt);
        REQUIRE(a.objective() == Approx(before + d).epsilon(1e-9));
      } else {
        const int op = static_cast<int>(rng() % t.ops());
        const int ch = static_cast<int>(rng() % t.choices(op));
        const double before = a.objective();
        const double d = a.delta(op, ch);
        a.move(op, ch);
        REQUIRE(a.objective() == Approx(before + d).epsilon(1e-9));
      }
      if (step % 500 == 499) {
        const Objective o = recompute_objective(t, a.choice());
        REQUIRE(a.time_s() == Approx(o.time_s).epsilon(1e-9));
        REQUIRE(a.penalty_s() == Approx(o.penalty_s).epsilon(1e-9).margin(1e-12));
        REQUIRE(a.memory_bytes(0) == Approx(o.memory_bytes[0]).epsilon(1e-9));
      }
    }
    CHECK(a.penalty_s() >= 0);
  }
}

TEST_CASE("a scheme maps into the tables and back to the same signatures", "[search][tables]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const Graph g = tiny_gpt();
  const CostTables t(g, c, table_options({2, 4}));
  const std::vector<Seed> seeds = make_seeds(t, 1, 5);
  REQUIRE(seeds.size() >= 4);
  for (const Seed& s : seeds) {
    const Scheme sc = to_scheme(t, s.choice, s.name);
    std::vector<int> back;
    REQUIRE(from_signatures(t, sc.op_sigs, &sc.param_storage, back));
    INFO(s.name);
    CHECK(back == s.choice);
  }
}

TEST_CASE("a tied coordinate priced once per class equals its full delta", "[search][tables]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph g = tiny_gpt(4);
  for (const auto& mesh : {std::vector<int>{2, 8}, std::vector<int>{16}, std::vector<int>{2, 2, 4}}) {
    TableOptions o = table_options(mesh);
    o.memory_capacity_bytes = 0.6e9;  // tight, so the memory penalty counts
    if (mesh.size() == 3) {           // two pipeline stages: members of one position split over them
      o.pipeline_dim = 0;
      o.op_stage.assign(g.ops.size(), 0);
      for (size_t i = g.ops.size() / 2; i < g.ops.size(); ++i) o.op_stage[i] = 1;
    }
    const CostTables t(g, c, o);
    const Coordinates tied = make_coordinates(t, true);
    REQUIRE(tied.reduced());
    REQUIRE(static_cast<int>(tied.rops.size()) < t.ops());
    std::mt19937_64 rng(7);
    // A tie-uniform start: every coordinate's members share one random choice.
    std::vector<int> choice(t.ops());
    for (int k = 0; k < tied.size(); ++k) {
      const int ch = static_cast<int>(rng() % t.choices(tied.ops[tied.op_begin[k]]));
      for (int j = tied.op_begin[k]; j < tied.op_begin[k + 1]; ++j) choice[tied.ops[j]] = ch;
    }
    Assignment a(t, choice);
    for (int step = 0; step < 400; ++step) {
      const int k = static_cast<int>(rng() % tied.size());
      const int* ops = &tied.ops[tied.op_begin[k]];
      const int n = tied.op_begin[k + 1] - tied.op_begin[k];
      const int ch = static_cast<int>(rng() % t.choices(ops[0]));
      std::vector<int> cs(n, ch);
      const int* terms = &tied.terms[tied.term_begin[k]];
      const int nt = tied.term_begin[k + 1] - tied.term_begin[k];
      const int r0 = tied.rop_begin[k], q0 = tied.rterm_begin[k];
      const double full = a.delta(ops, cs.data(), n, terms, nt);
      const double once = a.delta_tied(ops, n, ch, &tied.rops[r0], &tied.rop_mult[r0], tied.rop_begin[k + 1] - r0,
                                       &tied.rterms[q0], &tied.rterm_mult[q0], tied.rterm_begin[k + 1] - q0);
      INFO("mesh " << mesh.size() << "-D, step " << step << ", coordinate " << k << " of " << n << " ops");
      REQUIRE(once == Approx(full).margin(1e-12 * (std::fabs(a.objective()) + 1e-9)));
      a.move(ops, cs.data(), n, terms, nt);
    }
  }
}

TEST_CASE("interleaved tables hold v chunks per stage: the expert maps back exactly, memory is evaluate's, the bubble is priced",
          "[search][tables][interleaved]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const Graph g = tiny_gpt(8, 16);
  // 2 stages x 2 chunks of 2 layers, 8 micro-batches; sends not scattered (the tables price the
  // piece a stage holds).
  const Scheme e = make_scheme("megatron:tp=2,pp=2,dp=2,mb=1,sp=1,recompute=selective,sg=0,interleave=2", g, c, {});
  REQUIRE(e.virtual_stages == 2);
  const int n_ops = static_cast<int>(g.ops.size());
  const CostTables t(g, c, table_options_of(e, n_ops));
  REQUIRE(t.stages() == 2);
  std::vector<int> choice;
  REQUIRE(from_signatures(t, e.op_sigs, &e.param_storage, choice));
  const Scheme back = to_scheme(t, choice, "back");
  CHECK(back.op_chunk == e.op_chunk);
  CHECK(back.virtual_stages == 2);
  CHECK(back.schedule == PipelineSchedule::interleaved);
  const CostReport r = evaluate(g, c, e);
  CHECK(evaluate(g, c, back).iteration_s == r.iteration_s);

  // Memory: the peak stage's parameters plus 1 + (S-1)/(S·v) times its in-flight activations,
  // as evaluate() holds them (no ZeRO gathers, no full recompute here).
  const Objective obj = recompute_objective(t, choice);
  const double peak = std::max(obj.memory_bytes[0], obj.memory_bytes[1]);
  CHECK(peak == Approx(r.param_memory_bytes + r.activation_memory_bytes).epsilon(1e-9));
  CHECK(t.in_flight(0) == Approx(2 * (1 + 1.0 / 4)));
  TableOptions plain = table_options_of(e, n_ops);  // the same stages as plain 1F1B
  plain.virtual_stages = 1;
  plain.op_chunk.clear();
  const CostTables t1(g, c, plain);
  CHECK(recompute_objective(t1, choice).memory_bytes[0] < obj.memory_bytes[0]);

  // Per-micro-batch costs carry the bubble: m·(1 + (S-1)/(v·m)) = 8 + 1/2 micro-batch slots.
  CHECK(t.bubble_factor() == Approx(1 + 1.0 / (2 * 8)));
  CHECK(t1.bubble_factor() == Approx(1 + 1.0 / 8));
  int checked = 0;
  for (int i = 0; i < n_ops; ++i) {
    bool has_param = false;
    for (int x : g.ops[i].inputs) has_param |= g.tensors[x].role == TensorRole::parameter;
    if (has_param) continue;
    CHECK(t.node_s(i, choice[i]) == Approx(t.bubble_factor() * r.per_op[i].compute_s).epsilon(1e-12));
    ++checked;
  }
  CHECK(checked > 0);
}
