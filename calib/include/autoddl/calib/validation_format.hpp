// The validation runner's two files (docs/validation-plan.md): the per-rank program a scheme
// lowers to ("autoddl-validation-plan/1": GEMMs with local shapes, memory-bound kernels,
// NCCL collectives over mesh-dim groups, pipeline send/recv, each with the cost model's
// predicted seconds) and what the GPU runner measured for it ("autoddl-validation-result/1").
// Plain data plus strict JSON readers. Depends on nothing but nlohmann_json and the
// header-only InputError, so calib/gpu/validate_runner links it without the cost model.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace autoddl::calib {

inline constexpr const char* kPlanFormat = "autoddl-validation-plan/1";
inline constexpr const char* kResultFormat = "autoddl-validation-result/1";

enum class StepKind : uint8_t { gemm, memory, collective, send, recv };
enum class StepPhase : uint8_t { fwd, bwd, grad_sync, optimizer };

const char* step_kind_name(StepKind k);
const char* step_phase_name(StepPhase p);

// A convolution run as an implicit GEMM; the local (per-rank) geometry of the layer.
struct ConvGeometry {
  int64_t n = 0, c = 0, h = 0, w = 0;  // input (N, C, H, W)
  int64_t k = 0, r = 0, s = 0;         // weight (K, C, R, S)
  int64_t p = 0, q = 0;                // output height and width
  int64_t stride = 1, pad = 0;
};

struct PlanStep {
  StepKind kind = StepKind::memory;
  StepPhase phase = StepPhase::fwd;
  int op = -1;               // index into ValidationPlan::ops; -1: gradient bucket, optimizer
  int micro_batch = 0;
  std::string what;          // "fwd", "dgrad", "wgrad", "recompute", "boxing <tensor>", ...
  bool comm_stream = false;  // issued on the communication stream (gradient sync)
  std::string dtype;         // fp32 | fp16 | bf16 | int32 | int64
  // gemm: C(m×n) = A(m×k)·B(k×n), `batch` independent products (strided batched GEMM)
  int64_t m = 0, n = 0, k = 0, batch = 1;
  std::optional<ConvGeometry> conv;
  double flops = 0;
  // memory: bytes read + written; collective: nccl-tests size S; send/recv: message bytes;
  // gemm: the three operands once
  double bytes = 0;
  int kernels = 1;           // memory: kernel launches (the bytes are spread over them)
  std::string collective;    // all_reduce | all_gather | reduce_scatter | all_to_all
  int group = -1;            // collective, send, recv: index into ValidationPlan::groups
  int peer = -1;             // send, recv: the other rank
  int bucket = -1;           // grad_sync: bucket index (per stage)
  double predicted_s = 0;
};

// The ranks of one communicator: those that differ only in their coordinate on `mesh_dim`
// (a dim of the whole mesh, pipeline dim included), ordered by that coordinate.
struct PlanGroup {
  int mesh_dim = 0;
  std::vector<int> ranks;
};

// What the cost model says about one op per iteration (CostReport's per-op row).
struct PlanOp {
  std::string name, kind, signature;
  int stage = 0;
  double compute_s = 0;    // forward + backward (+ recompute), all micro-batches
  double comm_s = 0;       // forward + backward boxing and pipeline send/recv
  double grad_sync_s = 0;  // its parameters' gradient sync, before bucketing
};

struct RankProgram {
  int rank = 0;
  std::vector<int> coords;  // on the whole mesh
  int stage = 0;
  std::vector<PlanStep> steps;
};

struct ValidationPlan {
  std::string model, cluster, scheme, gpu;
  std::vector<int> mesh_shape;
  int pipeline_dim = -1;
  int stages = 1, micro_batches = 1;
  // The CostReport's totals (iteration_s, compute_s, comm_exposed_s, ..., count_by_kind).
  double iteration_s = 0, compute_s = 0, comm_exposed_s = 0, grad_sync_s = 0, bubble_s = 0;
  std::vector<std::pair<std::string, double>> count_by_kind;
  std::vector<PlanGroup> groups;
  std::vector<PlanOp> ops;
  std::vector<RankProgram> ranks;

  int world_size() const { return static_cast<int>(ranks.size()); }
};

// Per rank: mean seconds of each step over the timed iterations (CUDA events), the CUPTI
// kernel time of each step (< 0: not traced) and each timed iteration's seconds. Since issue 16
// (defect 7) the iterations are timed in a pass with no per-step events (`iteration_pass`), and
// the per-step pass's own iteration times, which include the events' overhead and the host's
// launch gaps, are kept apart in `stepped_iteration_s`; results written before have neither and
// their `iteration_s` came from the per-step pass.
struct RankMeasurement {
  int rank = 0;
  int device = 0;
  std::vector<double> step_s;
  std::vector<double> step_kernel_s;
  std::vector<double> iteration_s;
  std::vector<double> stepped_iteration_s;  // empty: not recorded (older results)
};

struct ValidationResult {
  std::string fingerprint;  // plan_fingerprint of the plan that ran
  std::string model, cluster, scheme;
  std::string skipped;      // non-empty: nothing ran, and why
  std::string device, date, command, host;
  std::vector<std::pair<std::string, std::string>> versions;
  int warmup = 0, iters = 0, cupti_iters = 0;
  bool overlap_grad_sync = true;  // gradient sync ran on its own stream
  // How iteration_s was timed: "stream" (steps enqueued back to back, events only between
  // iterations), "graph" (one CUDA graph per rank and iteration), "" (older results: the per-step
  // pass).
  std::string iteration_pass;
  std::vector<RankMeasurement> ranks;
};

void to_json(nlohmann::json& j, const ValidationPlan& p);
void to_json(nlohmann::json& j, const ValidationResult& r);
// Strict readers: unknown or missing keys and out-of-range values throw
// InputError(source, "<json path>", reason).
ValidationPlan plan_from_json(const nlohmann::json& j, const std::string& source);
ValidationResult result_from_json(const nlohmann::json& j, const std::string& source);
// Reads and checks a plan file (the runner's input); InputError(path, ...) if it is missing,
// not JSON or not a plan.
ValidationPlan read_plan_file(const std::string& path);

// 16 hex digits over what a measurement depends on: ranks, groups and every step's kind,
// phase, op, micro-batch, shape, bytes and group (not the predicted seconds, which change
// with a calibration file while the program stays the same).
std::string plan_fingerprint(const ValidationPlan& p);

}  // namespace autoddl::calib
