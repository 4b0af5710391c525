// Pipeline schedules on the executor: with p stages, m micro-batches and equal stage times,
// GPipe and 1F1B leave each device idle for the bubble fraction (p−1)/(m+p−1) (Huang et al.
// 2019; Narayanan et al. 2021), here within 2% with real send/recv between the stages.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/sim/simulate.hpp"

using namespace autoddl;
using sim::Phase;
using sim::TaskId;

namespace {
constexpr double kForward_s = 10e-3;
constexpr double kBackward_s = 20e-3;
constexpr double kActivationBytes = 4 * 1024 * 1024;

// Pipeline link (s, s+1) gets its own stream on both stages: even links on stream 2, odd on 3,
// so each stage talks to its two neighbours on two streams and a send never queues behind a
// transfer with the other neighbour.
int link_stream(int s) { return 2 + s % 2; }

// GPipe: all forwards, then all backwards (in reverse micro-batch order).
sim::Program gpipe(int p, int m) {
  sim::Program prog(p, 4);
  std::vector<std::vector<TaskId>> fwd(p, std::vector<TaskId>(m)), to_next(p, std::vector<TaskId>(m));
  for (int i = 0; i < m; ++i) {
    for (int s = 0; s < p; ++s) {
      sim::TaskOptions o{.phase = Phase::forward, .name = "F", .micro_batch = i, .stage = s};
      if (s > 0) o.deps = {to_next[s - 1][i]};
      fwd[s][i] = prog.compute_seconds(s, kForward_s, o);
      if (s + 1 < p)
        to_next[s][i] = prog.send_recv(s, s + 1, kActivationBytes,
                                       {.deps = {fwd[s][i]}, .phase = Phase::pipeline, .stream = link_stream(s)});
    }
  }
  std::vector<std::vector<TaskId>> to_prev(p, std::vector<TaskId>(m));
  for (int i = m - 1; i >= 0; --i) {
    for (int s = p - 1; s >= 0; --s) {
      sim::TaskOptions o{.phase = Phase::backward, .name = "B", .micro_batch = i, .stage = s};
      o.deps = {s + 1 < p ? to_prev[s + 1][i] : fwd[s][i]};
      TaskId b = prog.compute_seconds(s, kBackward_s, o);
      if (s > 0)
        to_prev[s][i] = prog.send_recv(s, s - 1, kActivationBytes,
                                       {.deps = {b}, .phase = Phase::pipeline, .stream = link_stream(s - 1)});
    }
  }
  return prog;
}

// 1F1B (PipeDream-Flush): stage s runs p−s−1 warm-up forwards, then alternates one forward
// and one backward, then drains. Tasks are created in a dependency-respecting sweep over the
// stages, so each link's transfers appear on both ends in the same order.
sim::Program one_f_one_b(int p, int m) {
  sim::Program prog(p, 4);
  struct Op {
    bool forward;
    int mb;
  };
  std::vector<std::vector<Op>> order(p);
  for (int s = 0; s < p; ++s) {
    const int warm = std::min(p - s - 1, m);
    int f = 0, b = 0;
    for (; f < warm; ++f) order[s].push_back({true, f});
    while (f < m) {
      order[s].push_back({true, f++});
      order[s].push_back({false, b++});
    }
    while (b < m) order[s].push_back({false, b++});
  }
  std::vector<std::vector<TaskId>> fwd(p, std::vector<TaskId>(m, -1)), to_next(p, std::vector<TaskId>(m, -1)),
      to_prev(p, std::vector<TaskId>(m, -1));
  std::vector<size_t> next(p, 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (int s = 0; s < p; ++s) {
      if (next[s] == order[s].size()) continue;
      const Op op = order[s][next[s]];
      const TaskId input = op.forward ? (s > 0 ? to_next[s - 1][op.mb] : -2)
                                      : (s + 1 < p ? to_prev[s + 1][op.mb] : fwd[s][op.mb]);
      if (input == -1) continue;  // not created yet
      sim::TaskOptions o{.phase = op.forward ? Phase::forward : Phase::backward, .micro_batch = op.mb, .stage = s};
      if (input >= 0) o.deps = {input};
      if (op.forward) {
        fwd[s][op.mb] = prog.compute_seconds(s, kForward_s, o);
        if (s + 1 < p)
          to_next[s][op.mb] = prog.send_recv(s, s + 1, kActivationBytes,
                                             {.deps = {fwd[s][op.mb]}, .stream = link_stream(s)});
      } else {
        TaskId b = prog.compute_seconds(s, kBackward_s, o);
        if (s > 0) to_prev[s][op.mb] = prog.send_recv(s, s - 1, kActivationBytes, {.deps = {b}, .stream = link_stream(s - 1)});
      }
      ++next[s];
      progress = true;
    }
  }
  return prog;
}

// Returns the largest relative deviation of a device's bubble from the formula.
double check_bubble(const sim::Program& prog, int p, int m) {
  const auto c = costmodel::resolve_cluster("dgx-a100", 1);
  const sim::SimResult r = sim::simulate(prog, c);
  const double expected = double(p - 1) / (m + p - 1);
  double worst = 0;
  for (int d = 0; d < p; ++d) {
    const double bubble = 1 - r.devices[d].compute_s / r.iteration_s;
    worst = std::max(worst, std::abs(bubble - expected) / expected);
    INFO("p=" << p << " m=" << m << " device " << d << ": bubble " << bubble << ", expected " << expected);
    CHECK(r.devices[d].compute_s == Approx(m * (kForward_s + kBackward_s)).epsilon(1e-9));
    CHECK(bubble == Approx(expected).epsilon(0.02));
  }
  return worst;
}
}  // namespace

TEST_CASE("a GPipe schedule's simulated bubble fraction is (p-1)/(m+p-1) within 2%", "[sim][pipeline]") {
  double worst = 0;
  for (auto [p, m] : {std::pair{4, 8}, {4, 4}, {8, 32}}) worst = std::max(worst, check_bubble(gpipe(p, m), p, m));
  WARN("GPipe bubble vs (p-1)/(m+p-1): max relative deviation " << worst);
}

TEST_CASE("a 1F1B schedule's simulated bubble fraction is (p-1)/(m+p-1) within 2%", "[sim][pipeline]") {
  double worst = 0;
  for (auto [p, m] : {std::pair{4, 8}, {8, 32}}) worst = std::max(worst, check_bubble(one_f_one_b(p, m), p, m));
  WARN("1F1B bubble vs (p-1)/(m+p-1): max relative deviation " << worst);
}
