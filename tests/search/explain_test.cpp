// search::explain: identical layers fold into one row whose costs are per layer and sum back to
// the report's per-op totals; against itself nothing differs; against the expert a descent moved
// away from, the changed rows carry the expert's choice and the deltas are the two reports';
// interleaved layers fold across stages, and the changes are listed per op position.
#include <catch2/catch.hpp>

#include <map>

#include "autoddl/search/explain.hpp"
#include "fixtures.hpp"

using namespace search_fixtures;

namespace {

// cd-expert and megatron on a zoo GPT; both results required.
struct ExpertRun {
  SearchRun run;
  const SearchResult* ce = nullptr;
  const SearchResult* mega = nullptr;
};

void run_expert(ExpertRun& x, const char* cluster, int nodes, const std::map<std::string, std::string>& knobs, Graph& g) {
  g = build_zoo_model("gpt", knobs);
  x.run = run_search(g, resolve_cluster(cluster, nodes), SearchOptions{}, {"cd-expert", "megatron"});
  for (const SearchResult& r : x.run.results) (r.method == "cd-expert" ? x.ce : x.mega) = &r;
  REQUIRE(x.ce);
  REQUIRE(x.mega);
}

}  // namespace

TEST_CASE("explain folds identical layers and names where a scheme differs from the expert", "[search][explain]") {
  Graph g;
  ExpertRun x;
  run_expert(x, "dgx-a100", 1, {{"batch", "16"}, {"layers", "8"}}, g);
  const SearchResult* ce = x.ce;
  const SearchResult* mega = x.mega;

  const Explanation self = explain(*ce, g, ce);
  CHECK(self.rows_changed == 0);
  CHECK(self.iteration_delta_s == 0);
  double compute = 0, sync = 0;
  int layers = 0;
  for (const ExplainRow& r : self.rows) {
    CHECK(r.reference.empty());
    CHECK(r.span == (r.count > 1 ? r.label + " .. " + r.last + " (x" + std::to_string(r.count) + ", each)" : r.label));
    compute += r.compute_s * r.count;
    sync += r.sync_s * r.count;
    if (r.label.rfind("layer.", 0) == 0) layers += r.count;
  }
  double per_op_compute = 0, per_op_sync = 0;
  for (const auto& row : ce->report.per_op) {
    per_op_compute += row.compute_s;
    per_op_sync += row.grad_sync_s;
  }
  CHECK(compute == Approx(per_op_compute).epsilon(1e-9));
  CHECK(sync == Approx(per_op_sync).epsilon(1e-9));
  CHECK(layers == 8);
  CHECK(self.rows.size() < static_cast<size_t>(self.rows_total));  // the 8 layers fold

  const Explanation diff = explain(*ce, g, mega);
  CHECK(diff.reference_method == "megatron");
  CHECK(diff.iteration_delta_s == Approx(ce->report.iteration_s - mega->report.iteration_s));
  CHECK(diff.memory_delta_bytes == Approx(ce->report.peak_memory_bytes - mega->report.peak_memory_bytes));
  if (ce->report.iteration_s < mega->report.iteration_s) {
    CHECK(diff.rows_changed > 0);
    int shown = 0;
    for (const ExplainRow& r : diff.rows) {
      if (r.reference.empty()) continue;
      CHECK(r.reference != r.choice);
      shown += r.count;
    }
    CHECK(shown == diff.rows_changed);
  }
}

TEST_CASE("explain folds interleaved layers across stages and lists the changes against the expert by op position",
          "[search][explain][interleaved]") {
  // The best grid point here is interleaved; cd-expert improves on it from another grid point.
  Graph g;
  ExpertRun x;
  run_expert(x, "piz-daint", 8, {{"batch", "64"}, {"layers", "32"}, {"hidden", "4096"}, {"heads", "32"}}, g);
  const SearchResult* ce = x.ce;
  const SearchResult* mega = x.mega;
  REQUIRE(mega->scheme.virtual_stages > 1);
  REQUIRE(ce->report.iteration_s < mega->report.iteration_s);

  const Explanation self = explain(*mega, g, mega);
  CHECK(self.changes.empty());
  CHECK(self.config_changes.empty());
  // 32 layers alternate over the stages, yet identical ones fold into few rows, with no stage label.
  int layer_rows = 0;
  for (const ExplainRow& r : self.rows) {
    CHECK(r.label.find("[stage") == std::string::npos);
    layer_rows += r.label.rfind("layer.", 0) == 0;
  }
  CHECK(layer_rows < 32);

  const Explanation diff = explain(*ce, g, mega);
  REQUIRE(diff.rows_changed > 0);
  REQUIRE_FALSE(diff.changes.empty());
  int changed = 0;
  for (const ExplainChange& x : diff.changes) {
    CHECK(x.from != x.to);
    CHECK(x.count >= 1);
    CHECK(x.count <= x.of);
    changed += x.count;
  }
  CHECK(changed >= diff.rows_changed);  // every changed row holds at least one changed op
  for (size_t k = 1; k < diff.changes.size(); ++k) CHECK(diff.changes[k - 1].count >= diff.changes[k].count);
  // The starting grid point differs from the best one in its whole-scheme settings too.
  const bool same_config = ce->scheme.mesh_shape == mega->scheme.mesh_shape &&
                           ce->scheme.micro_batches == mega->scheme.micro_batches &&
                           ce->scheme.virtual_stages == mega->scheme.virtual_stages;
  CHECK(diff.config_changes.empty() == same_config);
}

TEST_CASE("on a Mixture-of-Experts model explain names the chosen ep and etp and the grid's best per expert layout",
          "[search][explain][moe]") {
  const Graph g = build_zoo_model("mixtral-8x7b", {{"layers", "2"}, {"batch", "8"}});
  const SearchRun run = run_search(g, resolve_cluster("dgx-h100", 1), SearchOptions{}, {"cd-expert", "megatron"});
  const SearchResult* ce = nullptr;
  const SearchResult* mega = nullptr;
  for (const SearchResult& r : run.results) (r.method == "cd-expert" ? ce : mega) = &r;
  REQUIRE(ce);
  REQUIRE(mega);
  const Explanation e = explain(*ce, g, mega);
  REQUIRE(e.experts);
  CHECK(e.experts->experts == 8);
  CHECK(8 % e.experts->ep == 0);
  CHECK(e.experts->all_to_all_exposed_s == ce->report.all_to_all_exposed_s);
  CHECK((e.experts->ep > 1) == (ce->report.all_to_all_exposed_s > 0));
  // The grid's best layout heads the list, which holds the replicated experts and is ranked.
  REQUIRE(e.expert_alternatives.size() >= 3);
  CHECK(e.expert_alternatives.front().iteration_s == mega->report.iteration_s);
  bool replicated = false;
  for (size_t k = 0; k < e.expert_alternatives.size(); ++k) {
    const Explanation::ExpertAlternative& a = e.expert_alternatives[k];
    replicated |= a.layout == "replicated";
    CHECK((a.layout == "replicated") == (a.all_to_all_exposed_s == 0));
    if (k > 0 && a.feasible) CHECK(e.expert_alternatives[k - 1].iteration_s <= a.iteration_s);
  }
  CHECK(replicated);
  // A dense model has no expert line.
  Graph dense;
  ExpertRun x;
  run_expert(x, "dgx-a100", 1, {{"batch", "16"}, {"layers", "2"}}, dense);
  CHECK_FALSE(explain(*x.ce, dense, x.mega).experts);
  CHECK(explain(*x.ce, dense, x.mega).expert_alternatives.empty());
}
