// Coordinate descent's contract: it never ends worse than its seed (plain, neighbourhood and
// tied), stops at a fixed point no single move improves, neighbourhood mode never ends worse
// than plain CD from the same seed, and on a 2-layer GPT it lands within 1% of the ILP optimum.
#include <catch2/catch.hpp>

#include <random>
#include <set>

#include "autoddl/search/coordinate_descent.hpp"
#include "autoddl/search/ilp.hpp"
#include "autoddl/search/scheme_map.hpp"
#include "fixtures.hpp"

using namespace search_fixtures;

TEST_CASE("coordinate descent never ends worse than its seed, in every mode", "[search][cd]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph g = tiny_gpt(3);
  TableOptions o = table_options({2, 8});
  o.memory_capacity_bytes = 0.5e9;  // the penalty is part of what must not get worse
  const CostTables t(g, c, o);
  const Coordinates single = make_coordinates(t, false), tied = make_coordinates(t, true);
  for (const Seed& s : make_seeds(t, 3, 21)) {
    for (int mode = 0; mode < 3; ++mode) {
      Assignment a(t, s.choice);
      CdOptions opt;
      opt.neighbourhood = mode == 1;
      const CdStats st = coordinate_descent(a, mode == 2 ? tied : single, opt);
      INFO("seed " << s.name << ", mode " << mode);
      CHECK(st.start_objective_s == Approx(recompute_objective(t, s.choice).total()));
      CHECK(st.objective_s <= st.start_objective_s);
      CHECK(a.objective() == Approx(recompute_objective(t, a.choice()).total()).epsilon(1e-9));
    }
  }
}

TEST_CASE("plain coordinate descent stops where no single op can improve", "[search][cd]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const Graph g = tiny_gpt();
  const CostTables t(g, c, table_options({2, 4}));
  std::mt19937_64 rng(5);
  std::vector<int> start(t.ops());
  for (int i = 0; i < t.ops(); ++i) start[i] = static_cast<int>(rng() % t.choices(i));
  Assignment a(t, start);
  coordinate_descent(a, make_coordinates(t, false), CdOptions{});
  const double eps = 1e-12 * a.objective();
  for (int i = 0; i < t.ops(); ++i) {
    for (int ch = 0; ch < t.choices(i); ++ch) REQUIRE(a.delta(i, ch) >= -eps);
  }
}

TEST_CASE("neighbourhood descent never ends worse than plain descent from the same seed", "[search][cd]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph g = tiny_gpt();
  for (const auto& mesh : {std::vector<int>{2, 8}, std::vector<int>{16}}) {
    const CostTables t(g, c, table_options(mesh));
    const Coordinates co = make_coordinates(t, false);
    bool joint_helped = false;
    for (const Seed& s : make_seeds(t, 2, 9)) {
      Assignment plain(t, s.choice), nbh(t, s.choice);
      coordinate_descent(plain, co, CdOptions{});
      CdOptions n;
      n.neighbourhood = true;
      const CdStats st = coordinate_descent(nbh, co, n);
      INFO(s.name);
      CHECK(nbh.objective() <= plain.objective() * (1 + 1e-12));
      joint_helped |= st.joint_moves > 0 && nbh.objective() < plain.objective() * (1 - 1e-9);
    }
    CHECK(joint_helped);  // somewhere the joint moves cross a valley single moves cannot
  }
}

TEST_CASE("neighbourhood descent from the best seed is within 1% of the ILP optimum on a 2-layer GPT",
          "[search][cd][exact]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  const Graph g = tiny_gpt();
  const CostTables t(g, c, table_options({2, 4}));
  const Coordinates co = make_coordinates(t, false);
  double best = 0;
  std::vector<int> best_choice;
  for (const Seed& s : make_seeds(t, 2, 1)) {
    Assignment a(t, s.choice);
    CdOptions n;
    n.neighbourhood = true;
    coordinate_descent(a, co, n);
    if (best_choice.empty() || a.objective() < best) {
      best = a.objective();
      best_choice = a.choice();
    }
  }
  IlpOptions o;
  o.time_limit_s = 60;
  o.warm_start = &best_choice;
  const IlpResult r = solve_ilp(t, co, o);
  REQUIRE(r.optimal);
  CHECK(r.objective_s <= best * (1 + 1e-9));
  CHECK(best <= r.objective_s * 1.01);
}

namespace {

// Tables on [2, 8]; a capacity fraction > 0 caps each GPU at that fraction of what the data
// parallel seed needs (a binding cap), 0 keeps the GPU's memory.
TableOptions capped_options(const Graph& g, const ClusterSpec& c, double capacity_fraction) {
  TableOptions o = table_options({2, 8});
  if (capacity_fraction > 0) {
    const CostTables loose(g, c, o);
    const Seed dp = make_seeds(loose, 0, 1).front();
    o.memory_capacity_bytes = capacity_fraction * recompute_objective(loose, dp.choice).memory_bytes[0];
  }
  return o;
}

// One neighbourhood descent from `seed` with options `n`, and the same with `off` applied (an
// exact shortcut turned off): the tests below pin such shortcuts as changing nothing but time.
struct OnOff {
  Assignment on, off;
  CdStats on_stats, off_stats;
};
OnOff descend_on_off(const CostTables& t, const Coordinates& co, const std::vector<int>& seed, CdOptions n,
                     void (*off)(CdOptions&)) {
  OnOff r{Assignment(t, seed), Assignment(t, seed), {}, {}};
  n.neighbourhood = true;
  r.on_stats = coordinate_descent(r.on, co, n);
  off(n);
  r.off_stats = coordinate_descent(r.off, co, n);
  return r;
}

}  // namespace

TEST_CASE("skipping repeated empty checks leaves every move and end point as it was", "[search][cd]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph g = tiny_gpt(4);
  long skipped = 0;
  for (const double capacity_fraction : {0.0, 0.5}) {  // 0: the GPU's memory; 0.5: a tight cap
    const CostTables t(g, c, capped_options(g, c, capacity_fraction));
    const Coordinates co = make_coordinates(t, false);
    bool penalized = false;
    for (const Seed& s : make_seeds(t, 2, 5)) {
      const OnOff x = descend_on_off(t, co, s.choice, {}, [](CdOptions& n) { n.skip_repeated_checks = false; });
      const CdStats &a = x.on_stats, &b = x.off_stats;
      INFO(s.name << ", capacity fraction " << capacity_fraction);
      CHECK(x.on.choice() == x.off.choice());
      CHECK(a.moves == b.moves);
      CHECK(a.joint_moves == b.joint_moves);
      CHECK(a.window_moves == b.window_moves);
      CHECK(b.checks_skipped == 0);
      skipped += a.checks_skipped;
      penalized |= Assignment(t, s.choice).penalty_s() > 0;
    }
    if (capacity_fraction > 0) CHECK(penalized);  // the tight cap does bind somewhere
  }
  CHECK(skipped > 0);
}

TEST_CASE("answering a check by an identical one leaves every move and end point as it was", "[search][cd]") {
  // Four identical layers: their joint and window checks meet the same op kinds, term kinds and
  // choices, so after the first layer the memo answers; with and without a binding cap (the
  // memory-weighing outcomes then live only until the next move).
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph g = tiny_gpt(4);
  long reused = 0;
  for (const double capacity_fraction : {0.0, 0.5}) {
    const CostTables t(g, c, capped_options(g, c, capacity_fraction));
    const Coordinates co = make_coordinates(t, false);
    for (const Seed& s : make_seeds(t, 2, 5)) {
      for (const bool skip : {true, false}) {
        CdOptions n;
        n.skip_repeated_checks = skip;
        const OnOff x = descend_on_off(t, co, s.choice, n, [](CdOptions& o) { o.memo_checks = false; });
        const CdStats &a = x.on_stats, &b = x.off_stats;
        INFO(s.name << ", capacity fraction " << capacity_fraction << ", skip " << skip);
        CHECK(x.on.choice() == x.off.choice());
        CHECK(a.objective_s == b.objective_s);
        CHECK(a.moves == b.moves);
        CHECK(a.joint_moves == b.joint_moves);
        CHECK(a.window_moves == b.window_moves);
        CHECK(a.neighbourhoods == b.neighbourhoods);
        CHECK(b.checks_reused == 0);
        reused += a.checks_reused;
      }
    }
  }
  CHECK(reused > 0);
}

TEST_CASE("ops and terms of identical layers share their pricing kinds and differ from other ones", "[search][cd]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph g = tiny_gpt(4);
  const CostTables t(g, c, table_options({2, 8}));
  const Coordinates co = make_coordinates(t, false);
  REQUIRE(co.op_kind.size() == static_cast<size_t>(t.ops()));
  REQUIRE(co.term_kind.size() == static_cast<size_t>(t.terms()));
  std::set<int> op_kinds(co.op_kind.begin(), co.op_kind.end()), classes;
  for (int op = 0; op < t.ops(); ++op) classes.insert(t.class_of(op));
  CHECK(op_kinds.size() < static_cast<size_t>(t.ops()));  // the layers' ops share kinds
  CHECK(op_kinds.size() >= classes.size());               // never merging two classes
  for (int a = 0; a < t.ops(); ++a) {
    for (int b = a + 1; b < t.ops(); ++b) {
      if (co.op_kind[a] != co.op_kind[b]) continue;
      INFO("ops " << a << " and " << b);
      REQUIRE(t.class_of(a) == t.class_of(b));
      for (int x = 0; x < t.choices(a); ++x) REQUIRE(t.node_s(a, x) == t.node_s(b, x));
    }
  }
}

TEST_CASE("choices whose term keys are equal price every term alike", "[search][cd][windows]") {
  // CostTables::term_key is what window DP groups candidates by: a field term_cost reads and the
  // key leaves out would price two grouped choices differently. On a 3-D mesh (many choices per
  // GEMM, several sharing a boxing state), with recompute so the forward terms price the backward
  // re-gather against the readers' data-gradient GEMMs.
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph g = tiny_gpt(2);
  TableOptions o = table_options({2, 2, 4});
  const CostTables t(g, c, o);
  std::mt19937 rng(7);
  std::vector<int> ch(t.ops());
  long equal_pairs = 0;
  for (int term = 0; term < t.terms(); ++term) {
    const int* mem = t.term_members(term);
    for (int l = 0; l < t.term(term).count; ++l) {
      const int op = mem[l];
      const int k = t.choices(op);
      std::vector<std::vector<uint64_t>> keys(k);
      for (int x = 0; x < k; ++x) {
        uint64_t buf[CostTables::kMaxTermKey];
        keys[x].assign(buf, buf + t.term_key(term, l, x, buf));
      }
      int checked = 0;  // 24 pairs of equal keys per member keep the test quick
      for (int x = 0; x < k && checked < 24; ++x) {
        for (int y = x + 1; y < k && checked < 24; ++y) {
          if (keys[x] != keys[y]) continue;
          ++equal_pairs;
          ++checked;
          for (int trial = 0; trial < 2; ++trial) {
            for (int q = 0; q < t.ops(); ++q) ch[q] = std::uniform_int_distribution<int>(0, t.choices(q) - 1)(rng);
            ch[op] = x;
            const double at_x = t.term_cost(term, ch.data());
            ch[op] = y;
            INFO("term " << term << " member " << l << " choices " << x << ", " << y);
            CHECK(t.term_cost(term, ch.data()) == at_x);
          }
        }
      }
    }
  }
  CHECK(equal_pairs > 100);
}

TEST_CASE("window DP priced once per group of candidates leaves every move and end point as it was",
          "[search][cd][windows]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph g = tiny_gpt(4);
  for (const std::vector<int>& mesh : {std::vector<int>{2, 8}, std::vector<int>{2, 2, 4}}) {
    const CostTables t(g, c, table_options(mesh));
    const Coordinates co = make_coordinates(t, false);
    long window_moves = 0;
    const std::vector<Seed> seeds = make_seeds(t, 1, 5);
    for (size_t i = 0; i < seeds.size(); i += 3) {  // every third seed: the test stays quick
      const Seed& s = seeds[i];
      const OnOff x = descend_on_off(t, co, s.choice, {}, [](CdOptions& n) { n.group_window_candidates = false; });
      const CdStats &a = x.on_stats, &b = x.off_stats;
      INFO(s.name << " on a mesh of " << mesh.size() << " dims");
      CHECK(x.on.choice() == x.off.choice());
      CHECK(a.objective_s == b.objective_s);
      CHECK(a.moves == b.moves);
      CHECK(a.window_moves == b.window_moves);
      window_moves += a.window_moves;
    }
    CHECK(window_moves > 0);  // the windows moved somewhere, so the DP's answers were used
  }
}
