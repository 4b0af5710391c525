// ClusterSpec: every hardware constant of a modeled cluster, loaded from JSON (a preset in
// costmodel/cluster/presets/ or a user file). Units are SI: bytes, seconds, FLOP/s. In JSON, every
// number may be written as {"value": x, "source": "datasheet / paper, table"}; presets must
// cite a source for every number, and the loader keeps the citations so save() round-trips.
// The loader rejects unknown or missing keys and out-of-range values (InputError).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autoddl/costmodel/dtype.hpp"

namespace autoddl::costmodel {

struct Calibration;  // calibration.hpp

// Fraction of peak a kernel reaches, by its FLOPs; interpolated linearly in log10(flops) and
// clamped at the ends. Points sorted by flops. The attention tables use the same points keyed
// by the key sequence length instead (`flops` then holds the length; JSON writes it "seq").
struct EfficiencyPoint {
  double flops = 0;
  double efficiency = 1;
  friend bool operator==(const EfficiencyPoint&, const EfficiencyPoint&) = default;
};
// An empty table means "no data": efficiency 1.
double interpolate_efficiency(const std::vector<EfficiencyPoint>& table, double flops);

struct GpuSpec {
  std::string name;
  double peak_flops_fp32 = 0;  // dense, FLOP/s
  double peak_flops_fp16 = 0;  // dense tensor-core FLOP/s
  double peak_flops_bf16 = 0;
  double peak_flops_fp8 = 0;   // dense FP8 tensor-core FLOP/s; 0 = no FP8 (optional in JSON)
  double memory_bytes = 0;
  // What training cannot use of memory_bytes (optional in JSON; 0 = none): the part of the
  // datasheet's capacity the driver does not hand to a process (nvidia-smi's Total and Reserved),
  // and the CUDA context, library workspaces and NCCL buffers outside the framework's allocator.
  // Feasibility compares the peak with usable_memory_bytes(); reports print the margin left.
  double memory_reserve_bytes = 0;
  double hbm_bytes_per_s = 0;
  double hbm_efficiency = 1;        // fraction of hbm_bytes_per_s memory-bound kernels reach
  double launch_overhead_s = 0;     // per kernel launch
  // Streaming multiprocessors (optional in JSON; 0 = unknown). Communication kernels that run
  // beside compute (NCCL's one CTA per channel, userbuffers' SMs) take SMs from it
  // (costmodel/cost/sm_contention.hpp); unknown prices no such slowdown.
  int sm_count = 0;
  std::vector<EfficiencyPoint> matmul_efficiency;
  std::vector<EfficiencyPoint> matmul_efficiency_fp8;  // FP8 GEMMs (optional; empty = matmul_efficiency)
  std::vector<EfficiencyPoint> conv_efficiency;
  // FP32 kernels run on the FMA units at a peak ~15x below the tensor cores', so a small GEMM
  // reaches a far larger share of it than of the bf16 peak: their own tables (optional; empty =
  // the tables above). `autoddl fit` measures them (gemm_cublaslt --dtypes fp32).
  std::vector<EfficiencyPoint> matmul_efficiency_fp32, conv_efficiency_fp32;
  // Fused attention kernels (FlashAttention-style, `flash=1`): share of the 16-bit peak by key
  // sequence length, forward and backward (optional; empty = peak, the roofline).
  std::vector<EfficiencyPoint> attention_efficiency_fwd, attention_efficiency_bwd;
  // Causal backward, whose load is less even than the unmasked one the bwd table measured
  // (optional; empty = attention_efficiency_bwd for causal attention too).
  std::vector<EfficiencyPoint> attention_efficiency_bwd_causal;
  // The fused kernel runs one CTA per 128 query rows per head and sequence: with fewer of those
  // tiles per SM (few heads per GPU, one sequence) its tail waves weigh more. The tables were
  // measured at `attention_reference_tiles` tiles; a kernel of T tiles on sm_count SMs gets
  // w/(w+c) ÷ w_ref/(w_ref+c) of them, w = T/sm_count, c = attention_tail_waves (0: no scaling).
  double attention_reference_tiles = 0;
  double attention_tail_waves = 0;
  // Memory-bound kernels that move their bytes slower than a plain elementwise kernel does (the
  // streaming rate, hbm_bytes_per_s x hbm_efficiency): their measured rate as a fraction of it
  // (optional; 0 = the streaming rate). Norms (LayerNorm, RMSNorm) forward and backward (whose
  // second kernel reduces dgamma and dbeta), the softmax cross-entropy over the vocabulary, and
  // the fused Adam step. Fractions of the streaming rate, not of the datasheet's, so that a
  // calibrated HBM rate (calibration_attach) keeps them meaning the same thing.
  double norm_fwd_rate = 0, norm_bwd_rate = 0;
  double loss_fwd_rate = 0, loss_bwd_rate = 0;
  double optimizer_rate = 0;

  double peak_flops(DType t) const;  // fp32 for int types too
  friend bool operator==(const GpuSpec&, const GpuSpec&) = default;
};

// The memory a scheme's parameters, gradients, optimizer state and activations may take.
inline double usable_memory_bytes(const GpuSpec& gpu) { return gpu.memory_bytes - gpu.memory_reserve_bytes; }

struct IntraNodeSpec {
  std::string fabric;           // "nvswitch", "nvlink", "pcie", or "none" (1 GPU per node)
  double bw_bytes_per_s = 0;    // per GPU, per direction
  double latency_s = 0;
  double efficiency = 1;        // fraction of bw a collective reaches (bus bandwidth / link)
  friend bool operator==(const IntraNodeSpec&, const IntraNodeSpec&) = default;
};

struct InterNodeSpec {
  int nics_per_node = 1;
  double nic_bw_bytes_per_s = 0;  // per NIC, per direction
  double latency_s = 0;
  double efficiency = 1;          // fraction of NIC bw a collective reaches
  std::string topology = "star";  // "star" or "fat-tree"
  double oversubscription = 1;    // fat-tree: downlink/uplink bandwidth ratio, >= 1
  friend bool operator==(const InterNodeSpec&, const InterNodeSpec&) = default;
};

// What NCCL's tuner needs beyond the links (nccl_model.hpp); optional in JSON. Without it,
// collectives use the α-β algorithms of collective.hpp.
struct NcclSpec {
  std::string arch;                  // "volta", "ampere", "hopper", "blackwell": NCCL's constants row
  double nvlink_bw_GBps = 0;         // per GPU, NCCL's units (links x topo.h per-link GB/s); 0 = PCIe
  bool nvls = false;                 // NVLink SHARP (third-generation NVSwitch, Hopper or later)
  std::string cpu_vendor = "intel";  // "intel", "amd" or "arm" (as intel): network post overhead and LL caps
  friend bool operator==(const NcclSpec&, const NcclSpec&) = default;
};

struct ClusterSpec {
  std::string name;
  std::string description;
  int nodes = 1;
  int gpus_per_node = 1;
  GpuSpec gpu;
  IntraNodeSpec intra;
  InterNodeSpec inter;
  std::optional<NcclSpec> nccl;
  std::string calibration_file;  // optional; empty = pure α-β
  // The loaded calibration_file (attach_calibration): its GPU figures have replaced the
  // preset's, and its measured collectives replace α-β where they apply. Null = none.
  std::shared_ptr<const Calibration> calibration;
  // Citation per field path ("gpu.memory_bytes" -> "NVIDIA A100 datasheet"), kept for save().
  std::map<std::string, std::string> sources;

  int total_gpus() const { return nodes * gpus_per_node; }
  // Largest nodes x gpus_per_node accepted from a file or --nodes (keeps GPU counts in int).
  static constexpr int64_t kMaxGpus = int64_t{1} << 20;
  // All NICs of a node together, per direction, after efficiency.
  double node_nic_bw_bytes_per_s() const {
    return inter.nics_per_node * inter.nic_bw_bytes_per_s * inter.efficiency;
  }
  double intra_bw_bytes_per_s() const { return intra.bw_bytes_per_s * intra.efficiency; }
  // Equal in every field and citation (what a JSON round trip must preserve).
  friend bool operator==(const ClusterSpec&, const ClusterSpec&) = default;
};

// Parses and checks a cluster JSON object; throws InputError(source, "<field path>", reason).
ClusterSpec cluster_from_json(const nlohmann::json& j, const std::string& source);
nlohmann::json cluster_to_json(const ClusterSpec& c);
ClusterSpec load_cluster_file(const std::string& path);

std::vector<std::string> preset_names();  // sorted
// A preset name or a path to a cluster JSON (ending in .json); a given nodes_override replaces
// the node count (and its citation becomes "--nodes N").
// Throws InputError("--cluster", ...) for an unknown preset, ("--nodes", ...) for < 1.
// (std::optional rather than int-with-0-meaning-none, so `--nodes 0` is an error, not a no-op.)
ClusterSpec resolve_cluster(const std::string& name_or_path,
                            std::optional<int> nodes_override = std::nullopt);

}  // namespace autoddl::costmodel
