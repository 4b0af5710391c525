// The validation plan is the cost model's own walk written out per rank: its steps must add up
// to evaluate()'s CostReport (compute, collective counts and times), its GEMMs must have the
// local shapes the signatures give, and every rank's list must run to the end with its peers
// (collectives and send/recv pairs met in the same order), or the GPU runner would hang.
#include <algorithm>
#include <map>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "autoddl/calib/validation_plan.hpp"
#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/collective.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/pipeline_schedule.hpp"
#include "autoddl/costmodel/zoo.hpp"

using namespace autoddl::calib;
using namespace autoddl::costmodel;

namespace {

Graph tiny_gpt(int64_t batch = 16, int layers = 2) {
  return build_zoo_model("gpt", {{"layers", std::to_string(layers)}, {"hidden", "256"}, {"heads", "8"}, {"seq", "128"},
                                 {"vocab", "1024"}, {"batch", std::to_string(batch)}});
}

Graph tiny_resnet() { return build_zoo_model("resnet50", {{"batch", "8"}, {"image", "64"}}); }

bool is_comm(const PlanStep& s) {
  return s.kind == StepKind::collective || s.kind == StepKind::send || s.kind == StepKind::recv;
}

double sum_predicted(const RankProgram& r, bool (*pick)(const PlanStep&)) {
  double t = 0;
  for (const PlanStep& s : r.steps) t += pick(s) ? s.predicted_s : 0;
  return t;
}

const PlanStep& fwd_gemm(const ValidationPlan& p, int rank, const std::string& op) {
  for (const PlanStep& s : p.ranks[rank].steps) {
    if (s.kind == StepKind::gemm && s.phase == StepPhase::fwd && s.op >= 0 && p.ops[s.op].name == op) return s;
  }
  FAIL("no forward GEMM of " << op);
  throw;
}

// Runs every rank's list as the GPU runner does: compute-stream steps in order, comm-stream
// steps in order once the compute stream has passed them; a collective completes when every
// member of its group is at it, a send when its peer is at the matching recv. Returns false
// on a stall (a deadlock on real GPUs).
bool runs_to_the_end(const ValidationPlan& p) {
  const int n = p.world_size();
  std::vector<std::vector<size_t>> lists(2 * n);  // [rank*2 + stream] -> step indices
  for (int r = 0; r < n; ++r) {
    for (size_t i = 0; i < p.ranks[r].steps.size(); ++i) lists[2 * r + p.ranks[r].steps[i].comm_stream].push_back(i);
  }
  std::vector<size_t> pos(2 * n, 0);
  auto head = [&](int q) -> const PlanStep* {
    if (pos[q] >= lists[q].size()) return nullptr;
    const int r = q / 2;
    if (q % 2 == 1) {  // a comm-stream step waits for the compute stream to pass it
      size_t idx = lists[q][pos[q]];
      size_t done = pos[2 * r] < lists[2 * r].size() ? lists[2 * r][pos[2 * r]] : SIZE_MAX;
      if (done < idx) return nullptr;
    }
    return &p.ranks[r].steps[lists[q][pos[q]]];
  };
  auto at = [&](int rank, const PlanStep& want, StepKind kind) -> int {
    for (int q : {2 * rank, 2 * rank + 1}) {
      const PlanStep* h = head(q);
      if (h && h->kind == kind && h->group == want.group && h->bytes == want.bytes &&
          h->collective == want.collective) {
        return q;
      }
    }
    return -1;
  };
  for (bool progress = true; progress;) {
    progress = false;
    for (int q = 0; q < 2 * n; ++q) {
      const PlanStep* h = head(q);
      if (!h) continue;
      if (h->kind == StepKind::gemm || h->kind == StepKind::memory) {
        ++pos[q], progress = true;
      } else if (h->kind == StepKind::collective) {
        std::vector<int> qs;
        for (int member : p.groups[h->group].ranks) qs.push_back(at(member, *h, StepKind::collective));
        if (std::count(qs.begin(), qs.end(), -1) == 0) {
          for (int x : qs) ++pos[x];
          progress = true;
        }
      } else {
        int other = at(h->peer, *h, h->kind == StepKind::send ? StepKind::recv : StepKind::send);
        if (other >= 0 && p.ranks[h->peer].steps[lists[other][pos[other]]].peer == q / 2) {
          ++pos[q], ++pos[other];
          progress = true;
        }
      }
    }
  }
  for (int q = 0; q < 2 * n; ++q) {
    if (pos[q] != lists[q].size()) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("the plan of a 1-GPU dp scheme has no communication and adds up to the CostReport's compute",
          "[calib][validation]") {
  ClusterSpec c = resolve_cluster("dgx-h100", 1);
  for (Graph g : {tiny_gpt(), tiny_resnet()}) {
    INFO(g.name);
    PlanBuild b = make_validation_plan(g, c, make_scheme("dp", g, c, {1}));
    const ValidationPlan& p = b.plan;
    REQUIRE(p.world_size() == 1);
    CHECK(p.groups.empty());
    for (const PlanStep& s : p.ranks[0].steps) CHECK_FALSE(is_comm(s));
    const double compute = sum_predicted(p.ranks[0], [](const PlanStep& s) { return !is_comm(s); });
    CHECK(compute == Approx(b.report.compute_s).epsilon(1e-9));
    CHECK(compute == Approx(b.report.iteration_s).epsilon(1e-9));
    // Per op: forward + backward steps are the CostReport's per-op compute.
    std::vector<double> per_op(p.ops.size(), 0);
    for (const PlanStep& s : p.ranks[0].steps) {
      if (s.op >= 0) per_op[s.op] += s.predicted_s;
    }
    for (size_t i = 0; i < p.ops.size(); ++i) CHECK(per_op[i] == Approx(b.report.per_op[i].compute_s).epsilon(1e-9));
    // Exactly one optimizer step, last.
    CHECK(p.ranks[0].steps.back().phase == StepPhase::optimizer);
  }
}

TEST_CASE("micro-batches repeat the forward and backward steps, one optimizer step per iteration",
          "[calib][validation]") {
  ClusterSpec c = resolve_cluster("dgx-h100", 1);
  Graph g = tiny_gpt();
  Scheme s1 = make_scheme("dp", g, c, {1});
  Scheme s4 = s1;
  s4.micro_batches = 4;
  PlanBuild one = make_validation_plan(g, c, s1), four = make_validation_plan(g, c, s4);
  size_t n1 = one.plan.ranks[0].steps.size(), n4 = four.plan.ranks[0].steps.size();
  CHECK(n4 - 1 == 4 * (n1 - 1));
  double compute = sum_predicted(four.plan.ranks[0], [](const PlanStep&) { return true; });
  CHECK(compute == Approx(four.report.compute_s).epsilon(1e-9));
  CHECK(four.plan.ranks[0].steps.front().micro_batch == 0);
  CHECK(four.plan.ranks[0].steps[n4 - 2].micro_batch == 3);
}

TEST_CASE("megatron tp=8 on one dgx-a100 node: one NCCL step per collective in the CostReport's count_by_kind",
          "[calib][validation][megatron]") {
  ClusterSpec c = resolve_cluster("dgx-a100", 1);
  Graph g = tiny_gpt();
  PlanBuild b = make_validation_plan(g, c, make_scheme("megatron:tp=8,pp=1,dp=1", g, c, {}));
  const ValidationPlan& p = b.plan;
  REQUIRE(p.world_size() == 8);
  REQUIRE(p.groups.size() == 1);
  CHECK(p.groups[0].ranks == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  const double all_reduces = b.report.comm.count[static_cast<size_t>(CollectiveKind::all_reduce)];
  CHECK(all_reduces >= 2 * 2 * 2);  // 2 layers × (attention + MLP) × (forward + backward)
  for (const RankProgram& r : p.ranks) {
    INFO("rank " << r.rank);
    std::map<std::string, double> count, seconds;
    for (const PlanStep& s : r.steps) {
      if (s.kind != StepKind::collective) continue;
      count[s.collective] += 1;
      seconds[s.collective] += s.predicted_s;
      CHECK(s.group == 0);
    }
    for (const CollectiveInfo& k : collective_kinds()) {
      auto i = static_cast<size_t>(k.kind);
      CHECK(count[std::string(k.name)] == b.report.comm.count[i]);
      CHECK(seconds[std::string(k.name)] == Approx(b.report.comm.time_s[i]).epsilon(1e-9));
    }
    CHECK(sum_predicted(r, [](const PlanStep& s) { return !is_comm(s); }) ==
          Approx(b.report.compute_s).epsilon(1e-9));
    // SPMD: every rank runs the same steps.
    CHECK(r.steps.size() == p.ranks[0].steps.size());
  }
  // Per op: its boxing steps are the CostReport's per-op boxing.
  std::vector<double> box(p.ops.size(), 0);
  for (const PlanStep& s : p.ranks[0].steps) {
    if (s.kind == StepKind::collective && s.op >= 0) box[s.op] += s.predicted_s;
  }
  for (size_t i = 0; i < p.ops.size(); ++i) CHECK(box[i] == Approx(b.report.per_op[i].boxing_s).margin(1e-15));
  for (const auto& [k, n] : p.count_by_kind) {
    if (k == "all_reduce") CHECK(n == all_reduces);
  }
  CHECK(runs_to_the_end(p));
}

TEST_CASE("local GEMM shapes follow the signature splits", "[calib][validation]") {
  const int64_t b = 16, s = 128, h = 256, heads = 8;
  Graph g = tiny_gpt(b);
  ClusterSpec c = resolve_cluster("dgx-a100", 1);

  SECTION("megatron: column-parallel fc1 and q, row-parallel fc2, attention heads split") {
    PlanBuild pb = make_validation_plan(g, c, make_scheme("megatron:tp=8,pp=1,dp=1", g, c, {}));
    const ValidationPlan& p = pb.plan;
    const PlanStep& fc1 = fwd_gemm(p, 3, "layer.0.ffn.fc1");
    CHECK((fc1.m == b * s && fc1.n == 4 * h / 8 && fc1.k == h && fc1.batch == 1));
    const PlanStep& fc2 = fwd_gemm(p, 3, "layer.0.ffn.fc2");
    CHECK((fc2.m == b * s && fc2.n == h && fc2.k == 4 * h / 8));
    const PlanStep& q = fwd_gemm(p, 3, "layer.0.attn.q");
    CHECK((q.m == b * s && q.n == h / 8 && q.k == h));
    const PlanStep& scores = fwd_gemm(p, 3, "layer.0.attn.scores");
    CHECK((scores.batch == b * heads / 8 && scores.m == s && scores.n == s && scores.k == h / heads));
  }
  SECTION("dp on 8: the batch is split") {
    PlanBuild pb = make_validation_plan(g, c, make_scheme("dp", g, c, {8}));
    const PlanStep& fc1 = fwd_gemm(pb.plan, 0, "layer.1.ffn.fc1");
    CHECK((fc1.m == b * s / 8 && fc1.n == 4 * h && fc1.k == h));
  }
  SECTION("every GEMM does the op's FLOPs divided by the signature's compute split") {
    for (const char* spec : {"dp", "megatron:tp=8,pp=1,dp=1", "megatron:tp=2,pp=2,dp=2,mb=2", "zero3"}) {
      INFO(spec);
      Scheme sc = make_scheme(spec, g, c, {});
      PlanBuild pb = make_validation_plan(g, c, sc);
      const RankProgram& r = pb.plan.ranks[0];
      std::map<std::pair<int, int>, double> fwd, bwd;  // (op, micro-batch)
      for (const PlanStep& st : r.steps) {
        if (st.kind != StepKind::gemm || st.what == "recompute") continue;
        (st.phase == StepPhase::fwd ? fwd : bwd)[{st.op, st.micro_batch}] += st.flops;
      }
      for (const auto& [key, flops] : fwd) {
        const Op& op = g.ops[key.first];
        const double want = op.work.fwd_flops / sc.micro_batches / sc.op_sigs[key.first].compute_split;
        CHECK(flops == Approx(want));
        CHECK(bwd[key] == Approx(op.work.bwd_flops / sc.micro_batches / sc.op_sigs[key.first].compute_split));
      }
    }
  }
  SECTION("conv layers are implicit GEMMs: M = N·P·Q, N = K, K = C·R·S") {
    Graph r = tiny_resnet();
    PlanBuild pb = make_validation_plan(r, c, make_scheme("dp", r, c, {8}));
    const PlanStep& conv1 = fwd_gemm(pb.plan, 0, "conv1");
    REQUIRE(conv1.conv);
    CHECK(conv1.conv->n == 1);  // batch 8 over 8 GPUs
    CHECK((conv1.conv->c == 3 && conv1.conv->k == 64 && conv1.conv->r == 7 && conv1.conv->p == 32));
    CHECK((conv1.m == 1 * 32 * 32 && conv1.n == 64 && conv1.k == 3 * 7 * 7));
  }
}

TEST_CASE("pipelines send and receive between stages in matching order", "[calib][validation][pipeline]") {
  ClusterSpec c = resolve_cluster("dgx-a100", 1);
  Graph g = tiny_gpt(16, 4);
  for (const char* spec : {"megatron:tp=1,pp=4,dp=2,mb=4", "megatron:tp=2,pp=2,dp=2,mb=2,schedule=gpipe",
                           "megatron:tp=1,pp=2,dp=4,mb=2,interleave=2"}) {
    INFO(spec);
    PlanBuild b = make_validation_plan(g, c, make_scheme(spec, g, c, {}));
    const ValidationPlan& p = b.plan;
    std::map<std::pair<int, int>, std::vector<double>> sent, received;
    for (const RankProgram& r : p.ranks) {
      for (const PlanStep& s : r.steps) {
        if (s.kind == StepKind::send) sent[{r.rank, s.peer}].push_back(s.bytes);
        if (s.kind == StepKind::recv) received[{s.peer, r.rank}].push_back(s.bytes);
        if (s.kind == StepKind::send || s.kind == StepKind::recv) {
          CHECK(p.groups[s.group].mesh_dim == p.pipeline_dim);
          CHECK(p.ranks[s.peer].stage != r.stage);
        }
      }
    }
    CHECK_FALSE(sent.empty());
    CHECK(sent == received);
    CHECK(runs_to_the_end(p));
    // Each rank's compute steps add up to the per-op compute of its stage's ops.
    for (const RankProgram& r : p.ranks) {
      double want = 0;
      for (const OpCostRow& o : b.report.per_op) want += o.stage == r.stage ? o.compute_s : 0;
      double got = sum_predicted(r, [](const PlanStep& s) { return !is_comm(s) && s.phase != StepPhase::optimizer; });
      CHECK(got == Approx(want).epsilon(1e-9));
    }
  }
}

TEST_CASE("a tensor read by several ops of the next stage is sent once: steps per kind are the CostReport's "
          "count_by_kind", "[calib][validation][pipeline]") {
  ClusterSpec c = resolve_cluster("dgx-a100", 1);
  // The CostReport counts its slowest stage, and a transfer on the stage of the op reading the
  // tensor (its forward recv and its gradient's send): with a 1024-word vocabulary that is
  // stage 0 (no transfers counted), with 8192 words the lm_head makes it stage 1, the reader.
  for (const char* vocab : {"1024", "8192"}) {
    INFO("vocab " << vocab);
    Graph g = build_zoo_model("gpt", {{"layers", "2"}, {"hidden", "256"}, {"heads", "8"}, {"seq", "128"},
                                      {"vocab", vocab}, {"batch", "16"}});
    PlanBuild b = make_validation_plan(g, c, make_scheme("megatron:tp=2,pp=2,dp=2,mb=2", g, c, {}));
    const ValidationPlan& p = b.plan;
    REQUIRE(p.stages == 2);
    // The residual stream crosses the stage boundary and has several readers on stage 1.
    std::map<int, int> readers;  // boundary tensor -> its readers on the next stage
    for (size_t i = 0; i < g.ops.size(); ++i) {
      for (int t : g.ops[i].inputs) {
        const int j = g.tensors[t].producer;
        if (j >= 0 && p.ops[j].stage == 0 && p.ops[i].stage == 1) ++readers[t];
      }
    }
    int most = 0;
    for (const auto& [t, n] : readers) most = std::max(most, n);
    CHECK(most >= 2);
    std::vector<double> stage_s(p.stages, 0);
    for (const OpCostRow& o : b.report.per_op) stage_s[o.stage] += (o.compute_s + o.boxing_s) / p.micro_batches;
    const int slow = static_cast<int>(std::max_element(stage_s.begin(), stage_s.end()) - stage_s.begin());
    REQUIRE(stage_s[slow] == Approx(b.report.stage_time_s).epsilon(1e-9));
    const double transfers = b.report.comm.count[static_cast<size_t>(CollectiveKind::send_recv)];
    CHECK(transfers == (slow == 1 ? 2 * p.micro_batches * readers.size() : 0));
    for (const RankProgram& r : p.ranks) {
      INFO("rank " << r.rank);
      std::map<std::string, double> count;
      std::vector<double> comm(p.ops.size(), 0);
      for (const PlanStep& s : r.steps) {
        if (s.kind == StepKind::collective) count[s.collective] += 1;
        if ((s.kind == StepKind::send || s.kind == StepKind::recv) && p.ops[s.op].stage == r.stage) {
          count["send_recv"] += 1;
        }
        if (is_comm(s) && s.op >= 0 && p.ops[s.op].stage == r.stage) comm[s.op] += s.predicted_s;
      }
      // Per op: its boxing and transfers are the CostReport's per-op communication.
      for (size_t i = 0; i < p.ops.size(); ++i) {
        if (p.ops[i].stage == r.stage) CHECK(comm[i] == Approx(b.report.per_op[i].boxing_s).margin(1e-15));
      }
      if (r.stage != slow) continue;
      for (const auto& [kind, n] : p.count_by_kind) {
        INFO(kind);
        CHECK(count[kind] == n);
      }
    }
    CHECK(runs_to_the_end(p));
  }
}

TEST_CASE("each stage runs its units in its pipeline schedule's order", "[calib][validation][pipeline]") {
  ClusterSpec c = resolve_cluster("dgx-a100", 1);
  Graph g = tiny_gpt(16, 4);
  for (const char* spec : {"megatron:tp=1,pp=4,dp=2,mb=4", "megatron:tp=2,pp=2,dp=2,mb=2,schedule=gpipe",
                           "megatron:tp=1,pp=2,dp=4,mb=2,interleave=2", "megatron:tp=1,pp=2,dp=4,mb=1,interleave=2"}) {
    INFO(spec);
    Scheme sc = make_scheme(spec, g, c, {});
    PlanBuild b = make_validation_plan(g, c, sc);
    const ValidationPlan& p = b.plan;
    int chunks = 1;
    for (int ch : sc.op_chunk) chunks = std::max(chunks, ch + 1);
    for (const RankProgram& r : p.ranks) {
      INFO("rank " << r.rank);
      // The rank's compute steps, one unit per run of the same pass, chunk and micro-batch.
      std::vector<WorkUnit> units;
      for (const PlanStep& s : r.steps) {
        if (s.kind != StepKind::gemm && s.kind != StepKind::memory) continue;
        if (s.phase != StepPhase::fwd && s.phase != StepPhase::bwd) continue;
        WorkUnit u{sc.op_chunk[s.op], s.micro_batch, s.phase == StepPhase::fwd};
        if (units.empty() || units.back().chunk != u.chunk || units.back().micro_batch != u.micro_batch ||
            units.back().forward != u.forward) {
          units.push_back(u);
        }
      }
      const std::vector<WorkUnit> want =
          stage_schedule(sc.schedule, p.stages, (chunks + p.stages - 1) / p.stages, r.stage, p.micro_batches);
      REQUIRE(units.size() == want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        INFO("unit " << i);
        CHECK(units[i].chunk == want[i].chunk);
        CHECK(units[i].micro_batch == want[i].micro_batch);
        CHECK(units[i].forward == want[i].forward);
      }
    }
    CHECK(runs_to_the_end(p));
  }
}

TEST_CASE("zero3 gathers parameters before use and reduce-scatters gradients, as counted",
          "[calib][validation][zero]") {
  ClusterSpec c = resolve_cluster("dgx-a100", 1);
  Graph g = build_zoo_model("mlp", {{"batch", "64"}});
  PlanBuild b = make_validation_plan(g, c, make_scheme("zero3", g, c, {8}));
  std::map<std::string, double> count;
  bool bucket_on_comm_stream = true;
  for (const PlanStep& s : b.plan.ranks[5].steps) {
    if (s.kind != StepKind::collective) continue;
    count[s.collective] += 1;
    if (s.phase == StepPhase::grad_sync) bucket_on_comm_stream = bucket_on_comm_stream && s.comm_stream;
  }
  CHECK(count["all_gather"] == b.report.comm.count[static_cast<size_t>(CollectiveKind::all_gather)]);
  CHECK(count["reduce_scatter"] == b.report.comm.count[static_cast<size_t>(CollectiveKind::reduce_scatter)]);
  CHECK(count["all_gather"] > 0);
  CHECK(bucket_on_comm_stream);
  double sync = 0;
  for (const PlanStep& s : b.plan.ranks[5].steps) sync += s.phase == StepPhase::grad_sync ? s.predicted_s : 0;
  CHECK(sync == Approx(b.report.grad_sync_s).epsilon(1e-9));
  CHECK(runs_to_the_end(b.plan));
}

TEST_CASE("a plan survives its JSON and the reader names bad fields", "[calib][validation][json]") {
  ClusterSpec c = resolve_cluster("dgx-a100", 1);
  Graph g = tiny_gpt();
  PlanBuild b = make_validation_plan(g, c, make_scheme("megatron:tp=2,pp=2,dp=2,mb=2", g, c, {}));
  nlohmann::json j = b.plan;
  ValidationPlan back = plan_from_json(j, "plan.json");
  CHECK(plan_fingerprint(back) == plan_fingerprint(b.plan));
  CHECK(back.ranks[3].steps.size() == b.plan.ranks[3].steps.size());
  CHECK(nlohmann::json(back) == j);

  nlohmann::json bad = j;
  bad["ranks"][1]["steps"][2]["colour"] = "red";
  CHECK_THROWS_WITH(plan_from_json(bad, "plan.json"), "plan.json: ranks[1].steps[2].colour: unknown key");
  bad = j;
  bad["ranks"][0]["steps"][0]["kind"] = "fft";
  CHECK_THROWS_WITH(plan_from_json(bad, "plan.json"),
                    Catch::Contains("ranks[0].steps[0].kind: 'fft' is not one of gemm, memory"));
  bad = j;
  bad["world_size"] = 7;
  CHECK_THROWS_AS(plan_from_json(bad, "plan.json"), autoddl::InputError);
  // The fingerprint ignores predictions (a calibration file changes them) but not shapes.
  ValidationPlan other = back;
  other.ranks[0].steps[0].predicted_s *= 2;
  CHECK(plan_fingerprint(other) == plan_fingerprint(back));
  other.ranks[0].steps[0].bytes += 2;
  CHECK(plan_fingerprint(other) != plan_fingerprint(back));
}
