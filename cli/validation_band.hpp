// How sure a prediction is: the error that experiments/validate_published.py measures against
// published step times, per GPU generation and layout family (experiments/validation_bands.json,
// written by `validate_published.py --bands` and compiled in), printed
// beside every `cost`, `search` and `simulate` prediction. The band is measured, never typed; a
// ctest fails when the committed file no longer matches the model (issue 34 item 3).
#pragma once
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/cost_report.hpp"
#include "autoddl/costmodel/graph.hpp"

namespace autoddl::cli {

struct ValidationBand {
  int rows = 0, fast_rows = 0;  // fast: predicted below measured
  double mean_abs_error_pct = 0, max_abs_error_pct = 0, mean_error_pct = 0;
};

struct BandLookup {
  std::string hardware;  // the GPU generation, as the published tables name it ("H100")
  std::string family;    // "dense" (tensor/pipeline/data), "context" (cp > 1), "expert" (an MoE model)
  std::optional<ValidationBand> band;        // this generation and family
  std::optional<ValidationBand> generation;  // this generation, every family
  // This generation and family in the diagnostic tables (published rows the model is known to
  // miss, kept out of the gated set): printed when no gated band covers the family.
  std::optional<ValidationBand> diagnostic;
  bool calibrated = false;                   // the cluster's constants are a calibration's, not the preset's
};

// "H100-SXM5-80GB" -> "H100": the name up to its first '-'.
std::string gpu_generation(const costmodel::ClusterSpec& cluster);
// The family a costed scheme belongs to; validate_published.py files each row under the family
// this names in the row's `cost --json` (its "validation_band"), so both sides classify alike.
std::string layout_family(const costmodel::Graph& graph, const costmodel::CostReport& report);
BandLookup validation_band(const costmodel::ClusterSpec& cluster, const costmodel::Graph& graph,
                           const costmodel::CostReport& report);

// One line without a trailing newline: "H100, dense layouts: mean |error| 4.1% over 10 published
// rows (max 11.0%), mostly fast (7 of 10 predicted below measured)".
std::string band_line(const BandLookup& b);
// {"hardware", "family", "calibrated_cluster", "band": {...} or null, "generation": {...} or null,
//  "diagnostic": {...} or null}
nlohmann::json band_json(const BandLookup& b);

}  // namespace autoddl::cli
