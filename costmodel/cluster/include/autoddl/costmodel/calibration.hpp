// Calibration: what measurements on a real cluster taught us, in the shape the cost model and
// the simulator consume. Collectives per (kind, group): fitted α-β per size band (Hockney,
// T = α + β·S, S the nccl-tests "size") and/or the measured (bytes, time) table; GEMM and conv
// efficiency by FLOPs per dtype; HBM bandwidth and launch overhead; where it came from.
// Written by `autoddl fit`, referenced by ClusterSpec::calibration_file; schema in
// docs/calibration-json.md. The loader is strict: unknown or missing keys and out-of-range
// values throw InputError(file, "<field path>", reason).
#pragma once
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/collective.hpp"
#include "autoddl/costmodel/dtype.hpp"
#include "autoddl/costmodel/nccl_model.hpp"

namespace autoddl::costmodel {

// How well a band's α-β line explains the points it was fitted to (relative errors, so
// 0.02 = 2%). r2 is weighted by 1/t², like the fit, so small messages count as much as big ones.
struct FitQuality {
  int points = 0;
  double r2 = 0;
  double max_rel_error = 0;
  double mean_rel_error = 0;
  std::optional<double> holdout_rel_error;  // mean |error| on held-out sizes, when computed
};

// T(S) = alpha_s + beta_s_per_byte · S for S in [from_bytes, next band's from_bytes).
// The first band starts at 0; the last one extends to infinity.
struct AlphaBetaBand {
  double from_bytes = 0;
  double alpha_s = 0;
  double beta_s_per_byte = 0;
  std::optional<FitQuality> fit;
};

struct MeasuredPoint {
  double bytes = 0;
  double time_s = 0;
};

struct CollectiveCalibration {
  CollectiveKind kind = CollectiveKind::all_reduce;
  CommGroup group;
  int groups_per_node = 1;  // groups measured at once, each with ranks on every node (share its NICs)
  std::vector<AlphaBetaBand> bands;     // sorted by from_bytes; may be empty if measured isn't
  std::vector<MeasuredPoint> measured;  // strictly increasing bytes; may be empty
  std::string source;                   // e.g. the nccl-tests log it came from

  // α-β time of the band holding `bytes`; negative if there are no bands.
  double band_time_s(double bytes) const;
  // Log-log interpolation of the measured table inside its range, extrapolation outside
  // (the smallest time below, the last segment's slope above); negative if it is empty.
  double measured_time_s(double bytes) const;
};

// One link tier fitted over several measured group shapes (calib's link_tier_fit): a fixed cost
// plus per ring step α and per byte β, fixed_s + latency_steps(p)·α + bw_factor(p)·S·β
// (fixed_s + ring_time_s), so group shapes
// never measured on this tier get calibrated numbers. Intra-node: groups inside one node
// (ranks_per_node 0 = any). Inter-node: groups over several nodes with `ranks_per_node` ranks on
// each and `groups_per_node` such groups running at once.
struct LinkTierCalibration {
  bool inter_node = false;
  int ranks_per_node = 0;
  int groups_per_node = 1;
  double fixed_s = 0;
  double alpha_s = 0;
  double beta_s_per_byte = 0;
  int shapes = 0;                           // measured group shapes behind the fit
  double mean_rel_error = 0;                // on the points it was fitted to
  std::optional<double> holdout_rel_error;  // mean over shapes, each left out of the fit in turn
};

// The collectives a link tier describes (the ring model's): all_reduce, all_gather, reduce_scatter.
bool link_tier_collective(CollectiveKind kind);

// NCCL's cost model (nccl_model.hpp) with the few parameters a real cluster changes fitted to
// the measured all-reduce, all-gather and reduce-scatter sizes of one tier (calib's
// nccl_model_fit): every (algorithm, protocol) bandwidth of NCCL's tuner times bw_efficiency,
// every latency plus latency_offset_s. NCCL's structure, constants and choice of the fastest
// (algorithm, protocol) stay as they are. Tiers: intra-node (groups inside one node) and
// inter-node per (ranks per node, groups per node), like the link tiers: groups that share a
// node's NICs do not see the bandwidth NCCL's model gives one group alone.
struct NcclModelCalibration {
  bool inter_node = false;
  int ranks_per_node = 0;   // inter-node only
  int groups_per_node = 1;  // inter-node only
  double bw_efficiency = 1;
  double latency_offset_s = 0;
  // `autoddl fit --nccl-per-protocol`: a protocol fitted on its own sizes replaces the tier's
  // efficiency and offset for every algorithm's use of that protocol (index: NcclProto). On A100,
  // for one, LL128 and mid-size Simple fall short of NCCL's tuner by different amounts.
  struct Protocol {
    bool fitted = false;
    double bw_efficiency = 1;
    double latency_offset_s = 0;
    int points = 0;  // measured sizes NCCL ran with this protocol (by the fitted model's pick)
  };
  std::array<Protocol, kNcclProtoCount> protocols{};
  int shapes = 0;                           // measured group shapes behind the fit
  int points = 0;                           // measured sizes
  int attributed_points = 0;                // of which NCCL's log named the algorithm and protocol
  double mean_rel_error = 0;                // on the points it was fitted to
  std::optional<double> holdout_rel_error;  // mean over shapes, each left out of the fit in turn
};

// The cluster the NCCL-model tiers were fitted against (their inputs to NCCL's model); a
// cluster that uses the calibration gets the tiers applied to its own NCCL block.
struct NcclModelBasis {
  std::string cluster;
  std::string arch;
  double nvlink_bw_GBps = 0;
  double nic_bw_bytes_per_s = 0;
  int nics_per_node = 0;
  int gpus_per_node = 0;
};

// How a calibrated collective time was found.
enum class CalibrationMatch { none, measured, nccl_model, link_tier };

// NCCL's communicator for `groups_per_node` groups of g's shape at once (a mesh dim): the node's
// NICs shared among the groups (one NIC per GPU when rail-optimized).
NcclComm nccl_comm_for(const ClusterSpec& c, const CommGroup& g, int groups_per_node);
// NCCL's tuner table with a fitted tier applied (latencies clamped at 0).
NcclTuning apply_nccl_calibration(NcclTuning t, const NcclModelCalibration& m);

// Fraction of `peak_flops_per_s` one kernel of `op` ("matmul" or "conv") reaches, by FLOPs
// (same interpolation as GpuSpec::matmul_efficiency).
struct EfficiencyCalibration {
  std::string op;
  DType dtype = DType::fp32;
  double peak_flops_per_s = 0;  // the reference the efficiencies are fractions of
  std::string peak_source;      // where that peak came from ("--peak", a preset, ...)
  std::vector<EfficiencyPoint> points;
  int shapes = 0;                      // measured shapes behind the table
  std::optional<double> holdout_mape;  // mean |relative time error| on held-out shapes
};

// 0 means "not calibrated": the cluster preset's value stands.
struct MemoryCalibration {
  double hbm_bytes_per_s = 0;
  double launch_overhead_s = 0;
};

struct Provenance {
  std::string device;               // "NVIDIA H200"
  std::string date;                 // ISO 8601
  std::string command;              // the command line that produced the file
  std::vector<std::string> inputs;  // measurement files and logs it was fitted from
};

struct Calibration {
  Provenance provenance;
  std::vector<CollectiveCalibration> collectives;
  std::vector<EfficiencyCalibration> efficiency;
  std::vector<LinkTierCalibration> link_tiers;
  std::vector<NcclModelCalibration> nccl_model;  // empty: not fitted
  NcclModelBasis nccl_basis;                     // set when nccl_model is not empty
  MemoryCalibration memory;

  const CollectiveCalibration* find(CollectiveKind kind, const CommGroup& g,
                                    int groups_per_node = 1) const;
  // The tier fit for a group of g's shape run `groups_per_node` at a time: inside one node, the
  // intra-node tier; across nodes, the inter-node tier with the same ranks per node and groups
  // per node, else the one with the same NIC load (ranks per node x groups per node). Null if
  // none, and for collectives the ring model does not describe (all_to_all, send_recv).
  const LinkTierCalibration* find_tier(CollectiveKind kind, const CommGroup& g,
                                       int groups_per_node) const;
  const EfficiencyCalibration* find_efficiency(std::string_view op, DType dtype) const;
  // The NCCL-model tier for g's shape run `groups_per_node` at a time: inside one node the
  // intra-node tier; across nodes the inter-node tier with the same ranks per node and groups
  // per node, else the one nearest in NIC load (ranks per node x groups per node, by ratio; the
  // first of equals). Null if none, or for kinds NCCL's model does not price.
  const NcclModelCalibration* find_nccl_model(CollectiveKind kind, const CommGroup& g, int groups_per_node) const;

  // Calibrated time of one collective of `bytes` (nccl-tests size) over group g: the measured
  // table interpolated in log-size where it covers `bytes`, otherwise the band's α-β, otherwise
  // the table extrapolated; with no entry for (kind, g.ranks, g.ranks_per_node), the ring time
  // on the fitted link tier (find_tier). Negative when neither exists: the caller then falls back
  // to the α-β model of the cluster spec.
  double collective_time_s(CollectiveKind kind, const CommGroup& g, double bytes) const;
  // The same for `groups_per_node` groups of g's shape at once (a mesh dim): the entry measured
  // with that concurrency, else the fitted link tier's ring time; `how` says which.
  double collective_time_s(CollectiveKind kind, const CommGroup& g, int groups_per_node,
                           double bytes, CalibrationMatch* how = nullptr) const;
  // Calibrated efficiency of one `op` kernel of `flops` FLOPs; negative when uncalibrated.
  double kernel_efficiency(std::string_view op, DType dtype, double flops) const;
};

// Parses and checks a calibration JSON object; throws InputError(source, "<field path>", reason).
Calibration calibration_from_json(const nlohmann::json& j, const std::string& source);
nlohmann::json calibration_to_json(const Calibration& c);
Calibration load_calibration_file(const std::string& path);
// Writes atomically (temp file + rename).
void save_calibration_file(const std::string& path, const Calibration& c);

// Loads c.calibration_file (relative paths from `base_dir`) into c.calibration and applies its
// GPU figures to c.gpu: HBM bandwidth (then hbm_efficiency 1: it is the achieved rate), launch
// overhead, and matmul/conv efficiency tables rescaled to the preset's peak FLOP/s: the 16-bit
// table (else fp32) the shared one, an fp32 table the FP32 kernels' own, an fp8 table the FP8
// GEMMs' (calibration_attach.cpp). Sources say "calibrated: <file>". No-op if no file.
void attach_calibration(ClusterSpec& c, const std::string& base_dir);
// The same for a calibration already in memory (`autoddl fit` checking a plan against the
// calibration it just fitted); `label` names it in sources and becomes c.calibration_file.
void attach_calibration(ClusterSpec& c, std::shared_ptr<const Calibration> cal, const std::string& label);

}  // namespace autoddl::costmodel
