// Phase "timeline" of evaluate() (see timeline.hpp): stage times, the slowest stage, bubble,
// optimizer step and the iteration's breakdown.
#include "autoddl/costmodel/timeline.hpp"

#include <algorithm>

#include "autoddl/costmodel/compute.hpp"
#include "autoddl/costmodel/sm_contention.hpp"

namespace autoddl::costmodel {

StageTimes stage_times(const EvalFrame& f, const std::vector<OpCompute>& compute, const BoxingPlan& boxing) {
  const int S = f.stages;
  StageTimes st{std::vector<double>(S, 0), std::vector<double>(S, 0), std::vector<double>(S, 0),
                std::vector<double>(S, 0), std::vector<double>(S, 0), {}, {}};
  for (size_t i = 0; i < compute.size(); ++i) {
    const int s = f.op_stage[i];
    const OpCompute& c = compute[i];
    const OpBoxing& b = boxing.ops[i];
    st.fwd_s[s] += c.fwd_s + b.fwd_s + b.fwd_send_s;
    st.bwd_s[s] += c.bwd_s + b.bwd_s + b.bwd_send_s;
    st.compute_s[s] += c.fwd_s + c.bwd_s;
    st.comm_s[s] += b.fwd_s + b.bwd_s + b.fwd_send_s + b.bwd_send_s;
    st.send_recv_s[s] += b.fwd_send_s + b.bwd_send_s;
  }
  // pp_overlap (Scheme::overlap_p2p_comm): pipeline sends run on their own stream under the
  // stage's compute; only what exceeds a micro-batch's compute stays on the critical path.
  // The hidden part still runs NCCL's CTAs beside the compute (sm_contention.hpp).
  if (f.overlap_p2p_comm) {
    st.p2p_hidden_s.assign(S, 0);
    st.p2p_contention_s.assign(S, 0);
    for (int s = 0; s < S; ++s) {
      const double exposed = std::max(0.0, st.send_recv_s[s] - st.compute_s[s]);
      const double slowed = sm_contention_s(st.send_recv_s[s] - exposed, f.p2p_sms, f.sm_count);
      st.p2p_hidden_s[s] = st.send_recv_s[s] - exposed;
      st.p2p_contention_s[s] = slowed;
      st.fwd_s[s] += exposed - st.send_recv_s[s] + slowed;
      st.compute_s[s] += slowed;
      st.comm_s[s] += exposed - st.send_recv_s[s];
      st.send_recv_s[s] = exposed;
    }
  }
  for (int s = 0; s < S; ++s) {
    st.bwd_s[s] += boxing.stage_extra_bwd_s[s];
    st.comm_s[s] += boxing.stage_extra_bwd_s[s];
    st.send_recv_s[s] += boxing.stage_extra_bwd_s[s];
  }
  return st;
}

double pipeline_bubble_s(int stages, int virtual_stages, PipelineSchedule schedule, double stage_time_s) {
  if (stages <= 1) return 0;
  return (stages - 1.0) / (schedule == PipelineSchedule::interleaved ? virtual_stages : 1) * stage_time_s;
}

double pipeline_bubble_factor(int stages, int virtual_stages, double micro_batches) {
  return pipeline_bubble_s(stages, virtual_stages, PipelineSchedule::interleaved, 1.0) / micro_batches + 1.0;
}

int iteration_timeline(const GpuSpec& gpu, const EvalFrame& f, PipelineSchedule schedule,
                       const std::vector<OpCompute>& compute, const BoxingPlan& boxing, const GradSyncPhase& sync,
                       const std::vector<double>& optimizer_params, CostReport& r, IterationPlan* plan) {
  const int S = f.stages;
  const int m = f.micro_batches;
  const StageTimes st = stage_times(f, compute, boxing);
  int slow = 0;
  for (int s = 1; s < S; ++s) {
    if (st.fwd_s[s] + st.bwd_s[s] > st.fwd_s[slow] + st.bwd_s[slow]) slow = s;
  }
  const double T = st.fwd_s[slow] + st.bwd_s[slow];
  r.stage_time_s = T;
  // The distributed optimizer's shard all-gather: after the step, or (overlap_param_gather)
  // bucket by bucket under the next forward, exposing the first bucket and what outlasts one
  // micro-batch's forward of the stage.
  std::vector<double> gather(S, 0);
  for (int s = 0; s < S; ++s) {
    gather[s] = f.overlap_param_gather
                    ? std::max(sync.param_gather_first_s[s], sync.param_gather_s[s] - st.fwd_s[s])
                    : sync.param_gather_s[s];
  }
  double opt_step = 0;
  for (int s = 0; s < S; ++s) {
    const double step = optimizer_step_s(gpu, optimizer_params[s], f.train_dtype);
    opt_step = std::max(opt_step, step + gather[s]);
    if (plan) {
      plan->optimizer_s[s] = step;
      plan->optimizer_params[s] = optimizer_params[s];
    }
  }
  if (plan) {
    plan->grad_sync_contention_s = sync.contention_s;
    plan->p2p_hidden_s = st.p2p_hidden_s;
    plan->p2p_contention_s = st.p2p_contention_s;
  }
  r.bubble_s = pipeline_bubble_s(S, f.virtual_stages, schedule, T);
  r.iteration_s = m * T + r.bubble_s + r.grad_sync_exposed_s + sync.contention_s + opt_step;
  r.compute_s = m * st.compute_s[slow] + opt_step - gather[slow] + sync.contention_s;
  r.comm_exposed_s = m * st.comm_s[slow] + r.grad_sync_exposed_s + gather[slow];
  r.send_recv_s = m * st.send_recv_s[slow];
  r.fwd_boxing_s = 0;
  r.bwd_boxing_s = 0;
  for (size_t i = 0; i < compute.size(); ++i) {
    if (f.op_stage[i] != slow) continue;
    r.fwd_boxing_s += m * boxing.ops[i].fwd_s;
    r.bwd_boxing_s += m * boxing.ops[i].bwd_s;
    r.context_parallel_exposed_s += m * boxing.ops[i].kv_exchange_s;
    r.context_parallel_s += m * boxing.ops[i].kv_exchange_total_s;
  }
  r.comm = boxing.stage_tally[slow].scaled(m);
  // Boxing is not overlapped, so every all-to-all the slow stage runs is on the critical path.
  r.all_to_all_exposed_s = r.comm.time_s[static_cast<size_t>(CollectiveKind::all_to_all)];
  r.comm += sync.stage_tally[slow];
  return slow;
}

}  // namespace autoddl::costmodel
