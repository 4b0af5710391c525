// Predicted vs measured tables of a validation run (see validation_compare.hpp). Sums are per
// iteration and per rank, averaged over the ranks of the stage the model predicts slowest
// (its ranks run the same program in SPMD); an op's rows average the ranks of its own stage.
#include "autoddl/calib/validation_compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include <nlohmann/json.hpp>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"

namespace autoddl::calib {

using nlohmann::json;

namespace {

bool is_compute(const PlanStep& s) { return s.kind == StepKind::gemm || s.kind == StepKind::memory; }

// Accumulates one row over several ranks' steps, then averages per rank.
struct Acc {
  double predicted = 0, measured = 0, kernel = 0, count = 0;
  bool all_traced = true;
  void add(const PlanStep& s, double measured_s, double kernel_s) {
    predicted += s.predicted_s;
    measured += measured_s;
    if (kernel_s < 0) all_traced = false;
    else kernel += kernel_s;
    count += 1;
  }
  ErrorRow row(const std::string& name, int ranks) const {
    ErrorRow r;
    r.name = name;
    const double n = std::max(1, ranks);
    r.predicted_s = predicted / n;
    r.measured_s = measured / n;
    r.kernel_s = all_traced && count > 0 ? kernel / n : -1;
    r.count = count / n;
    return r;
  }
};

std::string seconds(double s) {
  char buf[32];
  if (s < 0) return "-";
  if (s >= 1) std::snprintf(buf, sizeof buf, "%.3f s", s);
  else if (s >= 1e-3) std::snprintf(buf, sizeof buf, "%.3f ms", s * 1e3);
  else std::snprintf(buf, sizeof buf, "%.1f us", s * 1e6);
  return buf;
}

std::string percent(const ErrorRow& r) {
  double e = r.error_pct();
  if (std::isnan(e)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", e);
  return buf;
}

json row_json(const ErrorRow& r) {
  double e = r.error_pct();
  return {{"name", r.name},
          {"count", r.count},
          {"predicted_s", r.predicted_s},
          {"measured_s", r.measured() ? json(r.measured_s) : json(nullptr)},
          {"kernel_s", r.kernel_s >= 0 ? json(r.kernel_s) : json(nullptr)},
          {"error_pct", std::isnan(e) ? json(nullptr) : json(e)}};
}

void print_row(std::string& out, const std::string& label, const ErrorRow& r) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "  %-34s %12s %12s %12s %8s\n", label.c_str(),
                r.count > 0 ? seconds(r.predicted_s).c_str() : "-",
                r.measured() ? seconds(r.measured_s).c_str() : "not measured", seconds(r.kernel_s).c_str(),
                percent(r).c_str());
  out += buf;
}

}  // namespace

double ErrorRow::error_pct() const {
  if (!(measured_s > 0)) return std::numeric_limits<double>::quiet_NaN();
  return (predicted_s - measured_s) / measured_s * 100;
}

Comparison compare_validation(const ValidationPlan& plan, const ValidationResult& res, const std::string& source) {
  if (!res.skipped.empty()) throw InputError(source, "skipped", "the runner measured nothing: " + res.skipped);
  const std::string fp = plan_fingerprint(plan);
  if (res.fingerprint != fp) {
    throw InputError(source, "plan.fingerprint",
                     "was measured for another program (" + res.model + ", " + res.scheme + ", fingerprint " +
                         res.fingerprint + "; this plan: " + plan.model + ", " + plan.scheme + ", " + fp +
                         "): use the same model, knobs, cluster size, mesh and scheme");
  }
  if (static_cast<int>(res.ranks.size()) != plan.world_size()) {
    throw InputError(source, "ranks", "has " + std::to_string(res.ranks.size()) + " ranks, the plan " +
                                          std::to_string(plan.world_size()));
  }
  for (int r = 0; r < plan.world_size(); ++r) {
    if (res.ranks[r].step_s.size() != plan.ranks[r].steps.size()) {
      throw InputError(source, "ranks[" + std::to_string(r) + "].step_s",
                       "has " + std::to_string(res.ranks[r].step_s.size()) + " steps, the plan " +
                           std::to_string(plan.ranks[r].steps.size()));
    }
  }

  Comparison c;
  c.model = plan.model;
  c.cluster = plan.cluster;
  c.scheme = plan.scheme;
  c.device = res.device;
  c.world_size = plan.world_size();
  c.iters = res.iters;

  // The compared ranks: the stage whose ranks have the most predicted work per iteration.
  std::vector<double> stage_work(plan.stages, -1);
  for (const RankProgram& r : plan.ranks) {
    double w = 0;
    for (const PlanStep& s : r.steps) w += s.comm_stream ? 0 : s.predicted_s;
    stage_work[r.stage] = std::max(stage_work[r.stage], w);
  }
  const int slow = static_cast<int>(std::max_element(stage_work.begin(), stage_work.end()) - stage_work.begin());
  for (const RankProgram& r : plan.ranks) {
    if (r.stage == slow) c.ranks.push_back(r.rank);
  }
  const int n = static_cast<int>(c.ranks.size());

  Acc compute, comm;
  std::map<std::string, Acc> phase, kind;
  std::vector<std::string> phase_order, kind_order;
  bool any_comm = false;
  for (int rank : c.ranks) {
    const RankProgram& rp = plan.ranks[rank];
    const RankMeasurement& rm = res.ranks[rank];
    for (size_t i = 0; i < rp.steps.size(); ++i) {
      const PlanStep& s = rp.steps[i];
      const bool cpu = is_compute(s);
      (cpu ? compute : comm).add(s, rm.step_s[i], rm.step_kernel_s[i]);
      any_comm = any_comm || !cpu;
      std::string ph = s.phase == StepPhase::grad_sync ? "grad sync"
                       : s.phase == StepPhase::optimizer ? "optimizer"
                       : std::string(step_phase_name(s.phase)) + (cpu ? " compute" : " comm");
      std::string k = s.kind == StepKind::collective ? s.collective : step_kind_name(s.kind);
      if (!phase.count(ph)) phase_order.push_back(ph);
      if (!kind.count(k)) kind_order.push_back(k);
      phase[ph].add(s, rm.step_s[i], rm.step_kernel_s[i]);
      kind[k].add(s, rm.step_s[i], rm.step_kernel_s[i]);
    }
  }
  c.compute = compute.row("compute", n);
  c.communication = comm.row("communication", n);
  if (!any_comm) {
    c.communication.measured_s = -1;
    c.notes.push_back("no communication in this plan (world size " + std::to_string(c.world_size) +
                      "): only compute was validated, communication was not measured");
  }
  for (const std::string& p : phase_order) c.by_phase.push_back(phase[p].row(p, n));
  for (const std::string& k : kind_order) c.by_kind.push_back(kind[k].row(k, n));

  // Iteration: the slowest rank of each timed iteration, then the median over iterations.
  std::vector<double> per_iter;
  for (int it = 0; it < res.iters; ++it) {
    double slowest = 0;
    for (const RankMeasurement& rm : res.ranks) slowest = std::max(slowest, rm.iteration_s[it]);
    per_iter.push_back(slowest);
  }
  std::sort(per_iter.begin(), per_iter.end());
  c.iteration.name = "iteration";
  c.iteration.predicted_s = plan.iteration_s;
  c.iteration.count = 1;
  if (!per_iter.empty()) {
    size_t h = per_iter.size() / 2;
    c.iteration.measured_s = per_iter.size() % 2 ? per_iter[h] : (per_iter[h - 1] + per_iter[h]) / 2;
  }
  // The per-step pass's iterations, measured the same way: what per-step events and launch gaps
  // add (issue 16, defect 7). Older results have no such pass: their iteration is the per-step one.
  if (!res.iteration_pass.empty() && !res.ranks.empty() && !res.ranks[0].stepped_iteration_s.empty()) {
    std::vector<double> stepped;
    for (size_t it = 0; it < res.ranks[0].stepped_iteration_s.size(); ++it) {
      double slowest = 0;
      for (const RankMeasurement& rm : res.ranks) {
        if (it < rm.stepped_iteration_s.size()) slowest = std::max(slowest, rm.stepped_iteration_s[it]);
      }
      stepped.push_back(slowest);
    }
    std::sort(stepped.begin(), stepped.end());
    const size_t h = stepped.size() / 2;
    c.stepped_iteration_s = stepped.size() % 2 ? stepped[h] : (stepped[h - 1] + stepped[h]) / 2;
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "iteration timed without per-step events (%s pass); the per-step pass took %.3f ms (%+.1f%%: "
                  "events and launch gaps), used for the step rows only",
                  res.iteration_pass.c_str(), c.stepped_iteration_s * 1e3,
                  c.iteration.measured_s > 0 ? (c.stepped_iteration_s / c.iteration.measured_s - 1) * 100 : 0.0);
    c.notes.push_back(buf);
  }
  if (!res.overlap_grad_sync) c.notes.push_back("gradient sync ran on the compute stream (no overlap)");
  if (plan.stages > 1) {
    c.notes.push_back("pipeline stages ran their schedule's order, transfers as blocking send/recv on the compute "
                      "stream, one at a time");
  }

  // Per op: the ranks of the op's stage.
  std::vector<Acc> op_compute(plan.ops.size()), op_comm(plan.ops.size());
  std::vector<int> stage_count(plan.stages, 0);
  for (const RankProgram& rp : plan.ranks) {
    ++stage_count[rp.stage];
    const RankMeasurement& rm = res.ranks[rp.rank];
    for (size_t i = 0; i < rp.steps.size(); ++i) {
      const PlanStep& s = rp.steps[i];
      if (s.op < 0 || plan.ops[s.op].stage != rp.stage) continue;
      (is_compute(s) ? op_compute : op_comm)[s.op].add(s, rm.step_s[i], rm.step_kernel_s[i]);
    }
  }
  double weighted = 0, weight = 0;
  for (size_t i = 0; i < plan.ops.size(); ++i) {
    const PlanOp& po = plan.ops[i];
    OpRow row;
    row.op = po.name;
    row.kind = po.kind;
    row.stage = po.stage;
    row.compute = op_compute[i].row("compute", stage_count[po.stage]);
    row.comm = op_comm[i].row("comm", stage_count[po.stage]);
    if (op_comm[i].count == 0) row.comm.measured_s = -1;
    double e = row.compute.error_pct();
    if (!std::isnan(e)) {
      weighted += std::fabs(e) * row.compute.measured_s;
      weight += row.compute.measured_s;
      if (std::fabs(e) > c.op_max_abs_error_pct) {
        c.op_max_abs_error_pct = std::fabs(e);
        c.op_max_error = po.name;
      }
    }
    c.ops.push_back(std::move(row));
  }
  c.op_mean_abs_error_pct = weight > 0 ? weighted / weight : 0;
  return c;
}

void to_json(json& j, const Comparison& c) {
  json phases = json::array(), kinds = json::array(), ops = json::array();
  for (const ErrorRow& r : c.by_phase) phases.push_back(row_json(r));
  for (const ErrorRow& r : c.by_kind) kinds.push_back(row_json(r));
  for (const OpRow& o : c.ops) {
    ops.push_back({{"op", o.op},
                   {"kind", o.kind},
                   {"stage", o.stage},
                   {"compute", row_json(o.compute)},
                   {"comm", row_json(o.comm)}});
  }
  j = {{"model", c.model},
       {"cluster", c.cluster},
       {"scheme", c.scheme},
       {"device", c.device},
       {"world_size", c.world_size},
       {"iters", c.iters},
       {"ranks_compared", c.ranks},
       {"iteration", row_json(c.iteration)},
       {"compute", row_json(c.compute)},
       {"communication", row_json(c.communication)},
       {"by_phase", phases},
       {"by_kind", kinds},
       {"op_compute_mean_abs_error_pct", c.op_mean_abs_error_pct},
       {"op_compute_max_abs_error_pct", c.op_max_abs_error_pct},
       {"op_compute_max_error_op", c.op_max_error},
       {"ops", ops},
       {"notes", c.notes}};
  if (c.stepped_iteration_s >= 0) j["stepped_iteration_s"] = c.stepped_iteration_s;
}

std::string format_comparison(const Comparison& c, int top_ops) {
  std::string out;
  char buf[512];
  std::snprintf(buf, sizeof buf, "validation: %s on %s (%s), scheme %s, %d rank%s, %d timed iterations\n",
                c.model.c_str(), c.cluster.c_str(), c.device.c_str(), c.scheme.c_str(), c.world_size,
                c.world_size == 1 ? "" : "s", c.iters);
  out += buf;
  std::snprintf(buf, sizeof buf, "  %-34s %12s %12s %12s %8s\n", "per iteration", "predicted", "measured",
                "kernel", "error");
  out += buf;
  print_row(out, "iteration (slowest rank, median)", c.iteration);
  print_row(out, "compute", c.compute);
  print_row(out, "communication", c.communication);
  out += "  by phase:\n";
  for (const ErrorRow& r : c.by_phase) print_row(out, "  " + r.name, r);
  out += "  by kind (steps per iteration):\n";
  for (const ErrorRow& r : c.by_kind) {
    std::snprintf(buf, sizeof buf, "  %s (%.0f)", r.name.c_str(), r.count);
    print_row(out, buf, r);
  }
  std::vector<const OpRow*> rows;
  for (const OpRow& o : c.ops) rows.push_back(&o);
  auto total = [](const OpRow* o) { return o->compute.measured_s + std::max(0.0, o->comm.measured_s); };
  std::stable_sort(rows.begin(), rows.end(), [&](const OpRow* a, const OpRow* b) { return total(a) > total(b); });
  size_t shown = top_ops < 0 ? rows.size() : std::min(rows.size(), static_cast<size_t>(top_ops));
  std::snprintf(buf, sizeof buf, "  ops (%zu of %zu, most measured time first):\n", shown, rows.size());
  out += buf;
  std::snprintf(buf, sizeof buf, "    %-30s %11s %11s %8s %11s %11s %8s\n", "op", "compute", "measured", "error",
                "comm", "measured", "error");
  out += buf;
  for (size_t i = 0; i < shown; ++i) {
    const OpRow& o = *rows[i];
    std::snprintf(buf, sizeof buf, "    %-30s %11s %11s %8s %11s %11s %8s\n", o.op.c_str(),
                  seconds(o.compute.predicted_s).c_str(), seconds(o.compute.measured_s).c_str(),
                  percent(o.compute).c_str(), o.comm.count > 0 ? seconds(o.comm.predicted_s).c_str() : "-",
                  seconds(o.comm.measured_s).c_str(), percent(o.comm).c_str());
    out += buf;
  }
  std::snprintf(buf, sizeof buf, "  op compute error: mean |error| %.1f%% (weighted by measured time), max %.1f%% (%s)\n",
                c.op_mean_abs_error_pct, c.op_max_abs_error_pct, c.op_max_error.empty() ? "-" : c.op_max_error.c_str());
  out += buf;
  for (const std::string& note : c.notes) out += "  note: " + note + "\n";
  return out;
}

std::string result_file_text(const ValidationResult& r, const Comparison* c) {
  json j = r;
  if (c) j["comparison"] = *c;
  return dump_json(j, 1) + "\n";
}

}  // namespace autoddl::calib
