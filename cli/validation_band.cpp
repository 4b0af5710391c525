// The validation bands (validation_band.hpp): the compiled-in table and its one-line reading.
#include "validation_band.hpp"

#include <cstdio>
#include <map>
#include <tuple>
#include <utility>


namespace autoddl::cli {

// experiments/validation_bands.json's text (cli/CMakeLists.txt generates this).
const char* embedded_validation_bands();

namespace {

using Key = std::tuple<std::string, std::string, bool>;  // (hardware, family, diagnostic)

// Parsed once: the file is written by validate_published.py and checked by a ctest, so a
// malformed one is a build defect; it reads as "no bands" rather than failing a prediction.
const std::map<Key, ValidationBand>& bands() {
  static const std::map<Key, ValidationBand> table = [] {
    std::map<Key, ValidationBand> t;
    const nlohmann::json doc = nlohmann::json::parse(embedded_validation_bands(), nullptr, false);
    if (!doc.is_object() || !doc.contains("bands") || !doc["bands"].is_array()) return t;
    for (const nlohmann::json& b : doc["bands"]) {
      ValidationBand v;
      v.rows = b.value("rows", 0);
      v.fast_rows = b.value("fast_rows", 0);
      v.mean_abs_error_pct = b.value("mean_abs_error_pct", 0.0);
      v.max_abs_error_pct = b.value("max_abs_error_pct", 0.0);
      v.mean_error_pct = b.value("mean_error_pct", 0.0);
      if (v.rows > 0) t[{b.value("hardware", ""), b.value("family", ""), b.value("diagnostic", false)}] = v;
    }
    return t;
  }();
  return table;
}

std::optional<ValidationBand> find(const std::string& hardware, const std::string& family,
                                   bool diagnostic = false) {
  const auto it = bands().find({hardware, family, diagnostic});
  if (it == bands().end()) return std::nullopt;
  return it->second;
}

const char* family_words(const std::string& family) {
  if (family == "context") return "context-parallel layouts";
  if (family == "expert") return "expert (MoE) layouts";
  return "dense layouts";
}

// "mostly fast" when at least two rows in three are predicted below measured.
const char* direction(const ValidationBand& b) {
  if (3 * b.fast_rows >= 2 * b.rows) return "mostly fast";
  if (3 * b.fast_rows <= b.rows) return "mostly slow";
  return "fast and slow alike";
}

std::string describe(const ValidationBand& b) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "mean |error| %.1f%% over %d published row%s (max %.1f%%), %s (%d of %d predicted below measured)",
                b.mean_abs_error_pct, b.rows, b.rows == 1 ? "" : "s", b.max_abs_error_pct, direction(b), b.fast_rows,
                b.rows);
  return buf;
}

nlohmann::json to_json(const std::optional<ValidationBand>& b) {
  if (!b) return nullptr;
  return {{"rows", b->rows},
          {"fast_rows", b->fast_rows},
          {"mean_abs_error_pct", b->mean_abs_error_pct},
          {"max_abs_error_pct", b->max_abs_error_pct},
          {"mean_error_pct", b->mean_error_pct}};
}

}  // namespace

std::string gpu_generation(const costmodel::ClusterSpec& cluster) {
  const std::string& name = cluster.gpu.name;
  return name.substr(0, name.find('-'));
}

std::string layout_family(const costmodel::Graph& graph, const costmodel::CostReport& report) {
  if (costmodel::routed_experts(graph) > 0) return "expert";
  if (report.context_parallel_s > 0) return "context";
  return "dense";
}

BandLookup validation_band(const costmodel::ClusterSpec& cluster, const costmodel::Graph& graph,
                           const costmodel::CostReport& report) {
  BandLookup b;
  b.hardware = gpu_generation(cluster);
  b.family = layout_family(graph, report);
  b.band = find(b.hardware, b.family);
  b.generation = find(b.hardware, "all");
  b.diagnostic = find(b.hardware, b.family, true);
  b.calibrated = cluster.calibration != nullptr;
  return b;
}

std::string band_line(const BandLookup& b) {
  std::string line;
  if (b.band) {
    line = b.hardware + ", " + family_words(b.family) + ": " + describe(*b.band);
  } else if (b.diagnostic) {
    // The gated rows do not cover this family and the published rows that do are known to miss:
    // say how far, rather than quote the other families' error.
    line = b.hardware + ", " + family_words(b.family) + ": not validated; the published rows of this kind " +
           "(diagnostic tables, not gated) show " + describe(*b.diagnostic);
  } else if (b.generation) {
    line = "no published " + std::string(family_words(b.family)) + " on " + b.hardware + " yet; " + b.hardware +
           ", every layout: " + describe(*b.generation);
  } else {
    line = "none: no published step times on " + (b.hardware.empty() ? std::string("this GPU") : b.hardware) +
           " yet, so this prediction is not validated";
  }
  if (b.calibrated) line += "; measured with the preset's constants, not this calibration's";
  return line;
}

nlohmann::json band_json(const BandLookup& b) {
  return {{"hardware", b.hardware},
          {"family", b.family},
          {"calibrated_cluster", b.calibrated},
          {"band", to_json(b.band)},
          {"generation", to_json(b.generation)},
          {"diagnostic", to_json(b.diagnostic)}};
}

}  // namespace autoddl::cli
