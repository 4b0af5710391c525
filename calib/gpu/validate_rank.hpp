// One rank of the validation runner (validate_runner.cu): the buffers its plan needs on its
// GPU, one cuBLASLt GEMM per distinct shape, and how each step is issued (cuBLASLt matmul,
// a copy kernel for memory-bound steps, NCCL collectives and send/recv on the communicator of
// the step's mesh-dim group), with CUDA events around every step in the per-step pass and only
// between iterations in the iteration pass (optionally one CUDA graph per iteration). In one
// process rank r drives GPU r; under MPI each process drives its own rank on its node's GPU.
#pragma once
#include <cublasLt.h>
#include <nccl.h>

#include <map>
#include <memory>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "autoddl/calib/validation_format.hpp"
#include "autoddl/calib/validation_memory.hpp"
#include "harness.hpp"
#include "nccl_harness.hpp"

namespace autoddl::calib::gpu {

template <>
struct Status<cublasStatus_t> {
  static bool ok(cublasStatus_t s) { return s == CUBLAS_STATUS_SUCCESS; }
  static std::string text(cublasStatus_t s) {
    return std::string(cublasLtGetStatusString(s)) + " (" + cublasLtGetStatusName(s) + ")";
  }
};

// The plan does not fit this machine (GPU memory): a skipped result, not a failure.
struct SkipRun : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One NCCL communicator per (group, member): all created in this process (ncclCommInitAll
// over the group's GPUs; rank r is GPU r), or, one process per rank (MPI), only this rank's,
// split from the NCCL world communicator, one ncclCommSplit per round of disjoint groups
// (validate_launch.hpp's split_rounds; every process makes every split, collectively).
class Communicators {
 public:
  explicit Communicators(const ValidationPlan& plan);
  Communicators(const ValidationPlan& plan, ncclComm_t world, int rank);
  ~Communicators();
  ncclComm_t comm(int group, int rank) const;
  int position(int group, int rank) const;  // the rank's index in the group

 private:
  const ValidationPlan& plan_;
  std::vector<std::vector<ncclComm_t>> comms_;
};

struct LtGemm;

class RankRunner {
 public:
  // Allocates and fills the rank's buffers on GPU `device`; throws SkipRun if they and what NCCL
  // will still allocate during the run (collective buffers unless connected at init, p2p
  // buffers) do not fit into the free memory.
  RankRunner(const ValidationPlan& plan, int rank, int device, const Communicators& comms, bool overlap,
             bool nccl_connected_at_init);
  ~RankRunner();
  RankRunner(const RankRunner&) = delete;
  RankRunner& operator=(const RankRunner&) = delete;

  // Enqueues one iteration: every step between two events, gradient sync on the comm stream
  // (joined before the optimizer step and at the end). `tag`: push CUPTI external id
  // (rank << 32 | step) around each step's launches.
  void enqueue_iteration(bool tag);
  // Waits for the iteration; adds each step's seconds to `step_sum` (if given) and returns
  // the iteration's seconds.
  double finish_iteration(std::vector<double>* step_sum);

  // The iteration pass (issue 16, defect 7): per-step events cost GPU time and keep the host
  // behind the GPU, so here `iterations` iterations are enqueued back to back with events only
  // between them, the steps issued directly or (graph) as the graph of capture_graph(). Returns
  // each iteration's seconds.
  std::vector<double> run_iteration_pass(int iterations, bool graph);
  // Captures one iteration (no step events) into a CUDA graph on this thread; "" on success,
  // else why not.
  std::string capture_graph();

 private:
  void issue(size_t i, cudaStream_t stream);
  // One iteration's steps: gradient sync forked to the comm stream and joined back; events
  // around each step if `step_events`; CUPTI external ids if `tag`.
  void enqueue_steps(bool step_events, bool tag);

  const ValidationPlan& plan_;
  const RankProgram& prog_;
  int rank_, device_;
  bool overlap_;
  cudaStream_t compute_ = nullptr, comm_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  void* workspace_ = nullptr;
  void *a_ = nullptr, *b_ = nullptr, *c_ = nullptr;  // GEMM operands
  void *src_ = nullptr, *dst_ = nullptr;             // memory-bound copies
  void *send_ = nullptr, *recv_ = nullptr;           // collectives
  int copy_blocks_max_ = 1;
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t, std::string>, std::unique_ptr<LtGemm>> gemms_;
  std::vector<LtGemm*> step_gemm_;
  std::vector<ncclComm_t> step_comm_;
  std::vector<int> step_group_size_, step_peer_;
  std::vector<cudaEvent_t> start_, stop_, fork_;
  cudaEvent_t iter_start_ = nullptr, iter_stop_ = nullptr, join_ = nullptr;
  std::vector<cudaEvent_t> bounds_;  // the iteration pass: iteration i is bounds_[i] .. bounds_[i + 1]
  cudaGraphExec_t graph_ = nullptr;
};

}  // namespace autoddl::calib::gpu
