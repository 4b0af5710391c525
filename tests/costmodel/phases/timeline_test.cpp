// Pins evaluate()'s timeline (timeline.hpp) on hand-made phase results: the slowest stage sets
// the iteration, m micro-batches plus the bubble plus the exposed sync plus the optimizer step,
// and a gather run for another stage counts on that stage's backward.
#include <catch2/catch.hpp>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/compute.hpp"
#include "autoddl/costmodel/timeline.hpp"

using namespace autoddl::costmodel;

TEST_CASE("the pipeline bubble is S - 1 slots of the slowest stage, divided by v when interleaved",
          "[costmodel][phases]") {
  CHECK(pipeline_bubble_s(1, 1, PipelineSchedule::one_f_one_b, 2.0) == 0);
  CHECK(pipeline_bubble_s(4, 1, PipelineSchedule::one_f_one_b, 2.0) == 6.0);
  CHECK(pipeline_bubble_s(4, 1, PipelineSchedule::gpipe, 2.0) == 6.0);
  CHECK(pipeline_bubble_s(4, 2, PipelineSchedule::interleaved, 2.0) == 3.0);
}

TEST_CASE("the slowest stage sets the iteration: m slots, bubble, exposed sync, optimizer step",
          "[costmodel][phases]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 1);
  EvalFrame f;
  f.stages = 2;
  f.micro_batches = 4;
  f.op_stage = {0, 1, 1};
  f.train_dtype = DType::fp16;
  std::vector<OpCompute> compute(3);
  compute[0] = {1.0, 2.0, 0, false};
  compute[1] = {0.5, 1.0, 0, false};
  compute[2] = {0.5, 1.5, 0.5, true};
  BoxingPlan boxing;
  boxing.ops.resize(3);
  boxing.ops[1] = {0.25, 0.25, 0.125, 0.125};
  boxing.stage_tally.resize(2);
  boxing.stage_extra_bwd_s = {0.5, 0};  // stage 0 gathers a gradient stage 1 sent back
  boxing.stage_tally[1].add(CollectiveKind::send_recv, 0.125, 1e6);
  GradSyncPhase sync;
  sync.exposed_s = 0.75;
  sync.total_s = 1.0;
  sync.param_gather_s = {0, 0.25};
  sync.stage_tally.resize(2);
  sync.stage_tally[1].add(CollectiveKind::all_reduce, 1.0, 1e6);
  const std::vector<double> params = {0, 1e6};

  const StageTimes st = stage_times(f, compute, boxing);
  CHECK(st.fwd_s[0] == 1.0);
  CHECK(st.bwd_s[0] == 2.5);  // with the gather for stage 1
  CHECK(st.fwd_s[1] == 0.5 + 0.25 + 0.125 + 0.5);
  CHECK(st.bwd_s[1] == 1.0 + 0.25 + 0.125 + 1.5);
  CHECK(st.send_recv_s[1] == 0.25);

  IterationPlan plan;
  plan.optimizer_s.assign(2, 0);
  plan.optimizer_params.assign(2, 0);
  CostReport r;
  r.grad_sync_exposed_s = sync.exposed_s;
  const int slow = iteration_timeline(c.gpu, f, PipelineSchedule::one_f_one_b, compute, boxing, sync, params, r, &plan);
  CHECK(slow == 1);
  const double T = st.fwd_s[1] + st.bwd_s[1];
  const double step = optimizer_step_s(c.gpu, 1e6, DType::fp16);
  CHECK(r.stage_time_s == T);
  CHECK(r.bubble_s == T);
  CHECK(r.iteration_s == Approx(4 * T + T + 0.75 + step + 0.25));
  CHECK(r.compute_s == Approx(4 * (0.5 + 1.0 + 0.5 + 1.5) + step));
  CHECK(r.comm_exposed_s == Approx(4 * 0.75 + 0.75 + 0.25));
  CHECK(r.fwd_boxing_s == 1.0);
  CHECK(r.bwd_boxing_s == 1.0);
  CHECK(plan.optimizer_s[1] == step);
  CHECK(plan.optimizer_params[1] == 1e6);
  CHECK(r.comm.count[static_cast<size_t>(CollectiveKind::send_recv)] == 4);
  CHECK(r.comm.count[static_cast<size_t>(CollectiveKind::all_reduce)] == 1);
}
