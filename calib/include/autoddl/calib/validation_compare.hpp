// Predicted vs measured for one validation run (Calculon's llm-validation: each row's
// error %, plus a summary): the plan holds the cost model's seconds per step, the runner's
// result the measured ones. Rows: the iteration, compute and communication per iteration,
// by phase and by step kind, and per op. Error % = (predicted − measured) / measured · 100.
// Depends on nothing but nlohmann_json and InputError, like validation_format.hpp, so the
// GPU runner prints the same table `autoddl validate --measured` does.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "autoddl/calib/validation_format.hpp"

namespace autoddl::calib {

struct ErrorRow {
  std::string name;
  double predicted_s = 0;
  double measured_s = -1;  // CUDA events; < 0: not measured
  double kernel_s = -1;    // CUPTI kernel time; < 0: not traced
  double count = 0;        // steps (or iterations) the row sums, per iteration and rank
  bool measured() const { return measured_s >= 0; }
  double error_pct() const;  // NaN when not measured or measured_s == 0
};

struct OpRow {
  std::string op, kind;
  int stage = 0;
  ErrorRow compute, comm;
};

struct Comparison {
  std::string model, cluster, scheme, device;
  int world_size = 1, iters = 0;
  ErrorRow iteration;  // the slowest rank per iteration, median over iterations
  // The same over the per-step pass's iterations (events around every step); < 0: the result
  // has no separate per-step pass (older results, whose iteration is that pass).
  double stepped_iteration_s = -1;
  ErrorRow compute, communication;
  std::vector<ErrorRow> by_phase, by_kind;
  std::vector<OpRow> ops;
  std::vector<int> ranks;  // the ranks (one stage) whose per-iteration sums the rows average
  double op_mean_abs_error_pct = 0;  // over ops' compute, weighted by measured time
  double op_max_abs_error_pct = 0;
  std::string op_max_error;
  std::vector<std::string> notes;
};

// Throws InputError(source, field, reason) when the result was skipped or does not belong to
// the plan (fingerprint, ranks, step counts).
Comparison compare_validation(const ValidationPlan& plan, const ValidationResult& result,
                              const std::string& source);

void to_json(nlohmann::json& j, const Comparison& c);
// The table `autoddl validate` prints: totals, phases, kinds, then the `top_ops` ops with the
// most measured time (all ops if top_ops < 0).
std::string format_comparison(const Comparison& c, int top_ops);

// The runner's result file: the result, and its own comparison when it has one.
std::string result_file_text(const ValidationResult& r, const Comparison* c);

}  // namespace autoddl::calib
