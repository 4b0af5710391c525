// The calibration-coverage table `autoddl cost` (on a calibrated cluster) and `autoddl fit
// --scheme` print: per collective the plan runs, its group shape, its sizes and whether the
// calibration measured it (costmodel/cost/calibration_coverage.hpp), plus the JSON rows.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "autoddl/costmodel/iteration_plan.hpp"

namespace autoddl::cli {

// Prints the table headed by `calibration` (the file's name) and returns it as JSON rows.
nlohmann::json print_calibration_coverage(const costmodel::IterationPlan& plan, const std::string& calibration);

}  // namespace autoddl::cli
