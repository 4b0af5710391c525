// SimReport from a lowered program and its simulation (see report.hpp): the critical device's
// breakdown, its collectives against their α-β times, and the discrepancy line.
#include "autoddl/sim/report.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <map>
#include <sstream>

namespace autoddl::sim {

namespace {

// "12.3 ms" style, without the printf family (sim/ has none).
std::string seconds_text(double s) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(3);
  if (std::abs(s) >= 1) o << s << " s";
  else if (std::abs(s) >= 1e-3) o << s * 1e3 << " ms";
  else o << s * 1e6 << " us";
  return o.str();
}

std::string percent_text(double x) {
  std::ostringstream o;
  o << std::showpos << std::fixed << std::setprecision(1) << x * 100 << "%";
  return o.str();
}

std::string ratio_text(double x) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(2) << x << "x";
  return o.str();
}

// The parts, in attribution priority.
enum Part : int { kCompute, kBoxing, kSendRecv, kGradSync, kBubble, kParts };
constexpr std::array<const char*, kParts> kPartNames = {"compute", "boxing", "send_recv", "grad_sync", "bubble"};

int part_of(const Task& t) {
  // tp_overlap's charge for chunking a GEMM is compute, but costmodel reports it with the
  // boxing it hides: compare like with like.
  if (t.kind == TaskKind::compute) return t.overlap == Overlap::tp ? kBoxing : kCompute;
  switch (t.phase) {
    case Phase::pipeline: return kSendRecv;
    case Phase::grad_sync: return kGradSync;
    default: return t.collective == costmodel::CollectiveKind::send_recv ? kSendRecv : kBoxing;
  }
}

// Seconds of [0, end] attributed to each part on one device: the highest-priority part active.
std::array<double, kParts> attribute(const Program& p, const SimResult& r, int device, double end) {
  std::vector<std::pair<double, int>> events;  // (time, +part+1 / −(part+1))
  for (size_t id = 0; id < p.size(); ++id) {
    const Task& t = p.tasks()[id];
    if (std::find(t.devices.begin(), t.devices.end(), device) == t.devices.end()) continue;
    const TaskTiming& tm = r.tasks[id];
    if (tm.end_s <= tm.start_s) continue;
    const int part = part_of(t);
    events.emplace_back(tm.start_s, part + 1);
    events.emplace_back(tm.end_s, -(part + 1));
  }
  std::sort(events.begin(), events.end());
  std::array<int, kParts> active{};
  std::array<double, kParts> out{};
  double now = 0;
  auto account = [&](double until) {
    if (until <= now) return;
    int part = kBubble;
    for (int k = 0; k < kBubble; ++k) {
      if (active[static_cast<size_t>(k)] > 0) {
        part = k;
        break;
      }
    }
    out[static_cast<size_t>(part)] += until - now;
    now = until;
  };
  for (const auto& [time, delta] : events) {
    account(time);
    active[static_cast<size_t>(std::abs(delta) - 1)] += delta > 0 ? 1 : -1;
  }
  account(end);
  return out;
}

// Seconds during which a transfer of overlap `kind` touching `device` ran while a compute task of
// the device did (unions of intervals, so concurrent transfers count once). tp_overlap's
// chunking charges are not compute that hides anything.
double hidden_under_compute_s(const Program& p, const SimResult& r, int device, Overlap kind) {
  std::vector<std::pair<double, double>> compute, comm;
  for (size_t id = 0; id < p.size() && id < r.tasks.size(); ++id) {
    const Task& t = p.tasks()[id];
    const bool compute_task = t.kind == TaskKind::compute && t.overlap == Overlap::none;
    if (!compute_task && (t.kind == TaskKind::compute || t.overlap != kind)) continue;
    if (std::find(t.devices.begin(), t.devices.end(), device) == t.devices.end()) continue;
    const TaskTiming& tm = r.tasks[id];
    if (tm.end_s > tm.start_s) (compute_task ? compute : comm).emplace_back(tm.start_s, tm.end_s);
  }
  auto merge = [](std::vector<std::pair<double, double>>& v) {
    std::sort(v.begin(), v.end());
    std::vector<std::pair<double, double>> out;
    for (const auto& x : v) {
      if (!out.empty() && x.first <= out.back().second) out.back().second = std::max(out.back().second, x.second);
      else out.push_back(x);
    }
    v = std::move(out);
  };
  merge(compute);
  merge(comm);
  double s = 0;
  size_t i = 0;
  for (const auto& [a, b] : comm) {
    while (i < compute.size() && compute[i].second <= a) ++i;
    for (size_t j = i; j < compute.size() && compute[j].first < b; ++j)
      s += std::min(b, compute[j].second) - std::max(a, compute[j].first);
  }
  return s;
}

std::string links_text(const std::vector<LinkUse>& links, size_t n) {
  std::ostringstream o;
  for (size_t i = 0; i < links.size() && i < n; ++i) {
    o << (i ? ", " : "") << links[i].name << " (" << std::fixed << std::setprecision(0)
      << links[i].utilization * 100 << "% busy)";
  }
  return o.str();
}

// Fills discrepancy, discrepancy_part and contended_links.
void explain(SimReport& r, const std::array<double, kParts>& sim, const std::array<double, kParts>& ana,
             const std::vector<double>& stage_compute_s) {
  int worst = kCompute;
  for (int k = 0; k < kParts; ++k)
    if (std::abs(sim[static_cast<size_t>(k)] - ana[static_cast<size_t>(k)]) >
        std::abs(sim[static_cast<size_t>(worst)] - ana[static_cast<size_t>(worst)]))
      worst = k;
  std::ostringstream o;
  o << "simulated " << seconds_text(r.iteration_s) << " vs analytical " << seconds_text(r.analytical_iteration_s) << " ("
    << percent_text(r.relative_difference) << "); the largest difference is " << kPartNames[static_cast<size_t>(worst)]
    << " on device " << r.critical_device << ": simulated " << seconds_text(sim[static_cast<size_t>(worst)])
    << " vs analytical " << seconds_text(ana[static_cast<size_t>(worst)]);
  // Collectives of that part (or of all parts, for the bubble) against their α-β times.
  double s_sim = 0, s_ab = 0;
  for (const CollectiveUse& u : r.collectives) {
    const int part = u.phase == Phase::pipeline ? kSendRecv
                     : u.phase == Phase::grad_sync ? kGradSync
                                                    : kBoxing;
    if (worst == kBubble || worst == kCompute || part == worst) {
      s_sim += u.simulated_s;
      s_ab += u.alpha_beta_s;
    }
  }
  const double slowdown = s_ab > 0 ? s_sim / s_ab : 1;
  r.discrepancy_part = kPartNames[static_cast<size_t>(worst)];
  if (slowdown > 1.05) {
    for (size_t i = 0; i < r.busiest_links.size() && i < 3; ++i) r.contended_links.push_back(r.busiest_links[i].name);
    o << "; " << (worst == kBubble || worst == kCompute ? "its collectives" : "these collectives") << " took "
      << ratio_text(slowdown) << " their alpha-beta time: contended links " << links_text(r.busiest_links, 3);
  } else if (worst == kBubble) {
    o << "; collectives ran at their alpha-beta time: the schedule differs (the analytical bubble is (S-1)*T of "
         "the slowest stage";
    if (stage_compute_s.size() > 1) {
      const auto [lo, hi] = std::minmax_element(stage_compute_s.begin(), stage_compute_s.end());
      if (*hi > *lo * 1.05) {
        o << ", but stages are unequal: compute " << seconds_text(*lo) << " on stage " << lo - stage_compute_s.begin()
          << " to " << seconds_text(*hi) << " on stage " << hi - stage_compute_s.begin();
      }
    }
    o << ")";
  } else if (worst != kCompute) {
    o << "; its collectives ran at their alpha-beta time, so the difference is overlap: the simulation "
      << (sim[static_cast<size_t>(worst)] < ana[static_cast<size_t>(worst)] ? "hides" : "exposes")
      << " more of it than the analytical model";
  }
  // Hidden time is where the models part without any collective slowing down: name it.
  for (const OverlapUse& u : r.overlaps) {
    o << "; " << u.name << " hid " << seconds_text(u.simulated_hidden_s) << " under compute in the simulation vs "
      << seconds_text(u.analytical_hidden_s) << " in the analytical model";
  }
  r.discrepancy = o.str();
}

}  // namespace

SimReport make_sim_report(const costmodel::Graph& graph, const LoweredProgram& lowered, const SimResult& result,
                          Fidelity fidelity, double tolerance) {
  const Program& p = lowered.program;
  const costmodel::CostReport& a = lowered.analytical;
  SimReport r;
  r.model = graph.name;
  r.cluster = a.cluster;
  r.scheme = a.scheme;
  r.mesh = a.mesh;
  r.fidelity = std::string(fidelity_name(fidelity));
  r.devices = p.devices();
  r.computing_devices = lowered.computing_devices();
  r.replicas_folded = lowered.replicas_folded;
  r.merged_compute = lowered.merged;
  r.stages = a.stages;
  r.micro_batches = a.micro_batches;
  r.tasks = static_cast<int64_t>(p.size());
  r.iteration_s = result.iteration_s;
  r.analytical_iteration_s = a.iteration_s;
  r.relative_difference = a.iteration_s > 0 ? (result.iteration_s - a.iteration_s) / a.iteration_s : 0;
  r.busiest_links = result.busiest_links;
  r.events = result.events;
  r.wall_s = result.wall_s;

  // Totals over computing devices (folded replicas only sync gradients), and the critical one.
  double least_idle = -1;
  for (int d = 0; d < p.devices(); ++d) {
    if (!lowered.computes[static_cast<size_t>(d)] || static_cast<size_t>(d) >= result.devices.size()) continue;
    const DeviceUse& u = result.devices[static_cast<size_t>(d)];
    r.compute_s = std::max(r.compute_s, u.compute_s);
    r.comm_s = std::max(r.comm_s, u.comm_s);
    r.exposed_comm_s = std::max(r.exposed_comm_s, u.exposed_comm_s);
    if (least_idle < 0 || u.idle_s < least_idle) {
      least_idle = u.idle_s;
      r.critical_device = d;
    }
  }
  const std::array<double, kParts> sim = attribute(p, result, r.critical_device, result.iteration_s);
  const std::array<double, kParts> ana = {a.compute_s, a.fwd_boxing_s + a.bwd_boxing_s, a.send_recv_s,
                                          a.grad_sync_exposed_s, a.bubble_s};
  r.bubble_s = sim[kBubble];
  for (int k = 0; k < kParts; ++k)
    r.breakdown.push_back({kPartNames[static_cast<size_t>(k)], sim[static_cast<size_t>(k)], ana[static_cast<size_t>(k)]});

  std::map<std::pair<int, int>, CollectiveUse> uses;
  for (size_t id = 0; id < p.size(); ++id) {
    const Task& t = p.tasks()[id];
    if (t.kind != TaskKind::collective) continue;
    if (std::find(t.devices.begin(), t.devices.end(), r.critical_device) == t.devices.end()) continue;
    CollectiveUse& u = uses[{static_cast<int>(t.phase), static_cast<int>(t.collective)}];
    u.phase = t.phase;
    u.kind = t.collective;
    ++u.count;
    u.simulated_s += result.tasks[id].end_s - result.tasks[id].start_s;
    u.alpha_beta_s += id < lowered.expected_s.size() ? lowered.expected_s[id] : 0;
  }
  for (const auto& [key, u] : uses) r.collectives.push_back(u);
  const auto critical_stage = static_cast<size_t>(lowered.device_stage[static_cast<size_t>(r.critical_device)]);
  for (const PlannedOverlap& o : lowered.overlaps) {
    r.overlaps.push_back({std::string(overlap_name(o.kind)), hidden_under_compute_s(p, result, r.critical_device, o.kind),
                          critical_stage < o.analytical_hidden_s.size() ? o.analytical_hidden_s[critical_stage] : 0});
  }

  std::vector<double> stage_compute_s(static_cast<size_t>(std::max(1, r.stages)), 0);
  for (int d = 0; d < p.devices() && static_cast<size_t>(d) < result.devices.size(); ++d) {
    const auto st = static_cast<size_t>(lowered.device_stage[static_cast<size_t>(d)]);
    if (lowered.computes[static_cast<size_t>(d)] && st < stage_compute_s.size())
      stage_compute_s[st] = std::max(stage_compute_s[st], result.devices[static_cast<size_t>(d)].compute_s);
  }
  if (std::abs(r.relative_difference) > tolerance) explain(r, sim, ana, stage_compute_s);
  return r;
}

nlohmann::json sim_report_to_json(const SimReport& r) {
  nlohmann::json j;
  j["model"] = r.model;
  j["cluster"] = r.cluster;
  j["scheme"] = r.scheme;
  j["mesh"] = r.mesh;
  j["fidelity"] = r.fidelity;
  j["devices"] = r.devices;
  j["computing_devices"] = r.computing_devices;
  j["replicas_folded"] = r.replicas_folded;
  j["merged_compute"] = r.merged_compute;
  j["stages"] = r.stages;
  j["micro_batches"] = r.micro_batches;
  j["tasks"] = r.tasks;
  j["iteration_s"] = r.iteration_s;
  j["compute_s"] = r.compute_s;
  j["comm_s"] = r.comm_s;
  j["exposed_comm_s"] = r.exposed_comm_s;
  j["bubble_s"] = r.bubble_s;
  j["analytical_iteration_s"] = r.analytical_iteration_s;
  j["relative_difference"] = r.relative_difference;
  j["critical_device"] = r.critical_device;
  auto& parts = j["breakdown"] = nlohmann::json::array();
  for (const ReportPart& x : r.breakdown)
    parts.push_back({{"part", x.name}, {"simulated_s", x.simulated_s}, {"analytical_s", x.analytical_s}});
  auto& colls = j["collectives"] = nlohmann::json::array();
  for (const CollectiveUse& u : r.collectives)
    colls.push_back({{"phase", std::string(phase_name(u.phase))},
                     {"kind", std::string(costmodel::collective_info(u.kind).name)},
                     {"count", u.count},
                     {"simulated_s", u.simulated_s},
                     {"alpha_beta_s", u.alpha_beta_s}});
  auto& overlaps = j["overlaps"] = nlohmann::json::array();
  for (const OverlapUse& u : r.overlaps)
    overlaps.push_back({{"overlap", u.name}, {"simulated_hidden_s", u.simulated_hidden_s},
                        {"analytical_hidden_s", u.analytical_hidden_s}});
  auto& links = j["busiest_links"] = nlohmann::json::array();
  for (const LinkUse& l : r.busiest_links)
    links.push_back({{"name", l.name}, {"bytes", l.bytes}, {"bw_bytes_per_s", l.bw_bytes_per_s},
                     {"utilization", l.utilization}});
  j["events"] = r.events;
  j["wall_s"] = r.wall_s;
  j["lowering_wall_s"] = r.lowering_wall_s;
  if (!r.discrepancy.empty())
    j["discrepancy"] = {{"cause", r.discrepancy}, {"part", r.discrepancy_part}, {"contended_links", r.contended_links}};
  return j;
}

SchemeSimulation simulate_scheme(const costmodel::Graph& graph, const costmodel::ClusterSpec& cluster,
                                 const costmodel::Scheme& scheme, const SimOptions& options,
                                 const LoweringOptions& lowering) {
  const auto t0 = std::chrono::steady_clock::now();
  SchemeSimulation s;
  s.lowered = lower_scheme(graph, cluster, scheme, lowering);
  const double lowering_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  SimOptions run = options;
  run.dtype = s.lowered.train_dtype;
  s.result = simulate(s.lowered.program, cluster, run);
  s.report = make_sim_report(graph, s.lowered, s.result, options.fidelity);
  s.report.lowering_wall_s = lowering_s;
  return s;
}

}  // namespace autoddl::sim
