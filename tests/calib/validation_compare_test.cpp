// Comparing a runner result with its plan: a synthetic measurement that is the prediction
// scaled by a known factor must come back as exactly that error in every row, and results
// that do not belong to the plan (another scheme, a skipped run, a step count off) are
// InputErrors naming the result file's field.
#include <algorithm>
#include <cmath>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "autoddl/calib/validation_compare.hpp"
#include "autoddl/calib/validation_plan.hpp"
#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/zoo.hpp"

using namespace autoddl::calib;
using namespace autoddl::costmodel;

namespace {

Graph tiny_gpt() {
  return build_zoo_model("gpt", {{"layers", "2"}, {"hidden", "256"}, {"heads", "8"}, {"seq", "128"},
                                 {"vocab", "1024"}, {"batch", "16"}});
}

// What a runner would report if every step took `compute` (GEMM, memory) or `comm` times its
// prediction, and each iteration `iteration` times the predicted iteration.
ValidationResult synthetic(const ValidationPlan& p, double compute, double comm, double iteration, int iters = 4) {
  ValidationResult r;
  r.fingerprint = plan_fingerprint(p);
  r.model = p.model, r.cluster = p.cluster, r.scheme = p.scheme;
  r.device = "synthetic";
  r.warmup = 1, r.iters = iters, r.cupti_iters = 1;
  for (const RankProgram& rp : p.ranks) {
    RankMeasurement m;
    m.rank = rp.rank;
    m.device = rp.rank;
    for (const PlanStep& s : rp.steps) {
      bool c = s.kind == StepKind::gemm || s.kind == StepKind::memory;
      m.step_s.push_back(s.predicted_s * (c ? compute : comm));
      m.step_kernel_s.push_back(s.predicted_s * (c ? compute : comm) * 0.9);
    }
    for (int i = 0; i < iters; ++i) m.iteration_s.push_back(p.iteration_s * iteration * (i == 0 ? 1.5 : 1.0));
    r.ranks.push_back(m);
  }
  return r;
}

}  // namespace

TEST_CASE("a measurement 25% slower than predicted reads as -20% in every row", "[calib][validation]") {
  ClusterSpec c = resolve_cluster("dgx-h100", 1);
  Graph g = tiny_gpt();
  PlanBuild b = make_validation_plan(g, c, make_scheme("dp", g, c, {1}));
  Comparison cmp = compare_validation(b.plan, synthetic(b.plan, 1.25, 1.25, 1.25), "measured.json");
  // The first iteration is slow (1.5x); the median ignores it.
  CHECK(cmp.iteration.error_pct() == Approx(-20));
  CHECK(cmp.compute.error_pct() == Approx(-20));
  CHECK(cmp.compute.predicted_s == Approx(b.report.compute_s));
  CHECK(cmp.compute.kernel_s == Approx(0.9 * 1.25 * b.report.compute_s));
  CHECK_FALSE(cmp.communication.measured());
  REQUIRE(cmp.notes.size() == 1);
  CHECK_THAT(cmp.notes[0], Catch::Contains("communication was not measured"));
  for (const ErrorRow& r : cmp.by_phase) CHECK(r.error_pct() == Approx(-20));
  for (const ErrorRow& r : cmp.by_kind) CHECK(r.error_pct() == Approx(-20));
  REQUIRE(cmp.ops.size() == g.ops.size());
  for (const OpRow& o : cmp.ops) {
    INFO(o.op);
    CHECK_FALSE(o.comm.measured());
    if (o.compute.predicted_s == 0) continue;  // a view runs no kernel: no error to report
    CHECK(o.compute.error_pct() == Approx(-20));
  }
  CHECK(cmp.op_mean_abs_error_pct == Approx(20));
  std::string table = format_comparison(cmp, 5);
  CHECK_THAT(table, Catch::Contains("iteration (slowest rank, median)") && Catch::Contains("-20.0%") &&
                        Catch::Contains("not measured") && Catch::Contains("ops (5 of"));
}

TEST_CASE("compute and communication errors are told apart on 8 ranks", "[calib][validation][megatron]") {
  ClusterSpec c = resolve_cluster("dgx-a100", 1);
  Graph g = tiny_gpt();
  PlanBuild b = make_validation_plan(g, c, make_scheme("megatron:tp=8,pp=1,dp=1", g, c, {}));
  Comparison cmp = compare_validation(b.plan, synthetic(b.plan, 0.8, 2.0, 1.0), "m.json");
  CHECK(cmp.ranks.size() == 8);
  CHECK(cmp.compute.error_pct() == Approx(25));          // predicted 1, measured 0.8
  CHECK(cmp.communication.error_pct() == Approx(-50));   // predicted 1, measured 2
  CHECK(cmp.iteration.error_pct() == Approx(0).margin(1e-9));
  bool saw_all_reduce = false;
  for (const ErrorRow& r : cmp.by_kind) {
    if (r.name == "all_reduce") {
      saw_all_reduce = true;
      CHECK(r.error_pct() == Approx(-50));
      CHECK(r.count == b.report.comm.count[0]);
    }
  }
  CHECK(saw_all_reduce);
  CHECK(cmp.notes.empty());
  nlohmann::json j = cmp;
  CHECK(j["communication"]["error_pct"].get<double>() == Approx(-50));
  CHECK(j["ops"].size() == g.ops.size());
}

TEST_CASE("a runner result survives its JSON, a foreign or skipped one is refused", "[calib][validation][json]") {
  ClusterSpec c = resolve_cluster("dgx-h100", 1);
  Graph g = tiny_gpt();
  PlanBuild b = make_validation_plan(g, c, make_scheme("dp", g, c, {1}));
  ValidationResult r = synthetic(b.plan, 1.1, 1.0, 1.1);
  nlohmann::json j = r;
  j["comparison"] = compare_validation(b.plan, r, "m.json");  // the runner also writes its table
  ValidationResult back = result_from_json(j, "m.json");
  CHECK(back.fingerprint == r.fingerprint);
  CHECK(back.ranks[0].step_s == r.ranks[0].step_s);
  CHECK(compare_validation(b.plan, back, "m.json").compute.error_pct() == Approx(100.0 / 1.1 - 100));

  PlanBuild other = make_validation_plan(g, c, make_scheme("dp", g, c, {8}));
  CHECK_THROWS_WITH(compare_validation(other.plan, back, "m.json"),
                    Catch::StartsWith("m.json: plan.fingerprint: was measured for another program"));

  ValidationResult skipped = r;
  skipped.skipped = "no usable GPU: no CUDA device";
  CHECK_THROWS_WITH(compare_validation(b.plan, skipped, "m.json"),
                    "m.json: skipped: the runner measured nothing: no usable GPU: no CUDA device");

  nlohmann::json bad = j;
  bad["ranks"][0]["step_s"].erase(0);
  CHECK_THROWS_WITH(result_from_json(bad, "m.json"), "m.json: ranks[0].step_kernel_s: needs one entry per step");
  bad = j;
  bad["ranks"][0]["iteration_s"].push_back(1.0);
  CHECK_THROWS_WITH(result_from_json(bad, "m.json"), Catch::Contains("ranks[0].iteration_s: needs one entry per timed"));
  bad = j;
  bad["timing"]["overlap"] = true;
  CHECK_THROWS_WITH(result_from_json(bad, "m.json"), "m.json: timing.overlap: unknown key");
}

TEST_CASE("iterations timed without per-step events are compared, the per-step pass's are kept and noted",
          "[calib][validation][json]") {
  ClusterSpec c = resolve_cluster("dgx-h100", 1);
  Graph g = tiny_gpt();
  PlanBuild b = make_validation_plan(g, c, make_scheme("dp", g, c, {1}));
  ValidationResult r = synthetic(b.plan, 1.0, 1.0, 1.25);
  r.iteration_pass = "stream";
  for (RankMeasurement& m : r.ranks) {
    for (double s : m.iteration_s) m.stepped_iteration_s.push_back(s * 1.1);  // events + launch gaps
  }
  nlohmann::json j = r;
  CHECK(j["timing"]["iteration_pass"] == "stream");
  CHECK(j["ranks"][0]["stepped_iteration_s"].size() == r.ranks[0].iteration_s.size());
  ValidationResult back = result_from_json(j, "m.json");
  CHECK(back.iteration_pass == "stream");
  CHECK(back.ranks[0].stepped_iteration_s == r.ranks[0].stepped_iteration_s);

  Comparison cmp = compare_validation(b.plan, back, "m.json");
  CHECK(cmp.iteration.error_pct() == Approx(-20));  // the clean pass, not the per-step one
  CHECK(cmp.stepped_iteration_s == Approx(b.plan.iteration_s * 1.25 * 1.1));
  // The note on the timing pass is one of several (a world of one also notes unmeasured comms).
  const auto pass_note = std::find_if(cmp.notes.begin(), cmp.notes.end(), [](const std::string& n) {
    return n.find("without per-step events (stream pass)") != std::string::npos;
  });
  REQUIRE(pass_note != cmp.notes.end());
  CHECK_THAT(*pass_note, Catch::Contains("+10.0%"));
  nlohmann::json cj = cmp;
  CHECK(cj["stepped_iteration_s"].get<double>() == Approx(cmp.stepped_iteration_s));

  nlohmann::json bad = j;
  bad["ranks"][0]["stepped_iteration_s"].push_back(1.0);
  CHECK_THROWS_WITH(result_from_json(bad, "m.json"),
                    Catch::Contains("ranks[0].stepped_iteration_s: needs one entry per timed iteration"));
  bad = j;
  bad["timing"]["iteration_pass"] = "events";
  CHECK_THROWS_WITH(result_from_json(bad, "m.json"), Catch::Contains("timing.iteration_pass: 'events' is not one of"));
}

TEST_CASE("a result written before the clean pass existed still reads, and its iteration is the per-step one",
          "[calib][validation][json]") {
  ClusterSpec c = resolve_cluster("dgx-h100", 1);
  Graph g = tiny_gpt();
  PlanBuild b = make_validation_plan(g, c, make_scheme("dp", g, c, {1}));
  nlohmann::json j = synthetic(b.plan, 1.0, 1.0, 1.25);
  CHECK_FALSE(j["timing"].contains("iteration_pass"));
  CHECK_FALSE(j["ranks"][0].contains("stepped_iteration_s"));
  ValidationResult back = result_from_json(j, "old.json");
  CHECK(back.iteration_pass.empty());
  Comparison cmp = compare_validation(b.plan, back, "old.json");
  CHECK(cmp.iteration.error_pct() == Approx(-20));
  CHECK(cmp.stepped_iteration_s < 0);
  nlohmann::json cj = cmp;
  CHECK_FALSE(cj.contains("stepped_iteration_s"));
}
