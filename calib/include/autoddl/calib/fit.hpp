// `autoddl fit` without the CLI: turns nccl-tests logs and our microbenchmarks' result files
// into a Calibration (α-β bands and measured tables per collective and group, efficiency tables
// per kernel and dtype, HBM bandwidth, launch overhead) plus the report of how well each fit
// explains the data, including errors on held-out sizes and shapes.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "autoddl/calib/alpha_beta_fit.hpp"
#include "autoddl/calib/efficiency_fit.hpp"
#include "autoddl/calib/link_tier_fit.hpp"
#include "autoddl/calib/measurements.hpp"
#include "autoddl/calib/memory_fit.hpp"
#include "autoddl/calib/nccl_model_fit.hpp"
#include "autoddl/calib/nccl_tests_parser.hpp"
#include "autoddl/costmodel/calibration.hpp"

namespace autoddl::calib {

struct FitOptions {
  BandOptions bands;               // collective bands; bands.holdout_every also drives kernels
  bool keep_measured = true;       // store measured tables next to the α-β bands
  bool link_tiers = true;          // fit intra-/inter-node link tiers over the group shapes
  // Fit NCCL's model (nccl_model_fit.hpp) against this cluster's NCCL block; none, or a cluster
  // without an nccl block: not fitted, with a note.
  std::optional<costmodel::ClusterSpec> nccl_cluster;
  NcclRestriction nccl_only;  // the NCCL_ALGO / NCCL_PROTO the logs were run with
  bool nccl_per_protocol = false;  // per-protocol (η, δ) after each tier's (fit_nccl_model)
  // Reference peaks efficiencies are fractions of. A dtype without one uses its best measured
  // throughput (efficiency relative to the best kernel seen), and the report says so.
  std::map<costmodel::DType, double> peak_flops_per_s;
  std::string peak_source = "--peak";
  EfficiencyFitOptions efficiency;  // holdout_every is taken from bands.holdout_every
  std::string command;              // provenance
  std::string date;                 // provenance; empty = now (UTC)
  // HBM bandwidth is fitted only on copies that move at least this many bytes (read + written):
  // smaller buffers stay in L2 when the benchmark reuses them (A100: 40 MB, H100/H200: 50 MB of
  // L2, NVIDIA's architecture whitepapers) and would inflate the fit (issue 16, defect 4).
  double hbm_min_bytes = 256.0 * 1024 * 1024;
};

struct CollectiveFitRow {
  costmodel::CollectiveKind kind;
  costmodel::CommGroup group;
  int groups_per_node = 1;
  GroupFit fit;
  int points = 0;
};

struct EfficiencyFitRow {
  std::string op;  // "matmul" or "conv"
  costmodel::DType dtype;
  double peak_flops_per_s = 0;
  std::string peak_source;
  EfficiencyFit fit;
};

struct HbmFitRow {
  std::string kernel;  // "copy", "scale", "triad" or "memcpy"
  HbmFit fit;
};

struct FitResult {
  costmodel::Calibration calibration;
  std::vector<CollectiveFitRow> collectives;
  std::vector<EfficiencyFitRow> efficiency;
  std::vector<LinkTierFitRow> link_tiers;
  std::vector<NcclModelFitRow> nccl_model;
  std::vector<HbmFitRow> hbm;            // the first one is the one stored
  std::optional<double> launch_overhead_s;
  std::vector<std::string> notes;        // what was left out, and why
};

// Throws InputError when there is nothing to fit, a log reports CPU time, or a kernel beats its
// stated peak.
FitResult fit_calibration(const std::vector<NcclTestsRun>& runs,
                          const std::vector<MeasurementFile>& files, const FitOptions& opt);

// The tables `autoddl fit` prints.
std::string format_fit_report(const FitResult& r);
// What each column of format_fit_report's tables means (the tables that are present only).
std::string fit_report_legend(const FitResult& r);

}  // namespace autoddl::calib
