// One rank's resources and step issue (see validate_rank.hpp). GEMMs are column-major
// C = A·B without transposes, fp32 accumulation (fp32 is plain FP32, as the presets' fp32
// peak and gemm_cublaslt assume), cuBLASLt's first heuristic algorithm, 32 MiB workspace; a
// batched step is one strided-batched matmul. A memory step of B bytes over k kernels copies
// B/(2k) bytes k times (half read, half written). Buffers are sized to the largest step of
// each kind and reused by every step, so operands of small steps may sit in L2.
#include "validate_rank.hpp"

#include <algorithm>
#include <cstdio>

#include "cupti_activity.hpp"
#include "validate_launch.hpp"

namespace autoddl::calib::gpu {

namespace {

constexpr size_t kWorkspaceBytes = kRunnerWorkspaceBytes;

__global__ void copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    dst[i] = src[i];
  }
}

// fill_random's dtypes: integers are filled as fp32 bit patterns (only their bytes matter).
std::string fill_dtype(const std::string& dtype) {
  return dtype == "fp16" || dtype == "bf16" ? dtype : "fp32";
}

cudaDataType_t cuda_type(const std::string& dtype) {
  return dtype == "fp32" ? CUDA_R_32F : dtype == "fp16" ? CUDA_R_16F : CUDA_R_16BF;
}

ncclDataType_t nccl_type(const std::string& dtype) {
  if (dtype == "fp16") return ncclFloat16;
  if (dtype == "bf16") return ncclBfloat16;
  if (dtype == "int32") return ncclInt32;
  if (dtype == "int64") return ncclInt64;
  return ncclFloat32;
}

void set_batch(cublasLtMatrixLayout_t l, int64_t batch, int64_t stride) {
  int32_t b = static_cast<int32_t>(batch);
  CALIB_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &b, sizeof b));
  CALIB_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
}

}  // namespace

struct LtGemm {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulHeuristicResult_t algo{};

  LtGemm(cublasLtHandle_t h, const PlanStep& s) {
    if (s.dtype != "fp32" && s.dtype != "fp16" && s.dtype != "bf16") {
      throw CalibError("validate_runner", __FILE__, __LINE__, "a GEMM in " + s.dtype + " is not supported");
    }
    cudaDataType_t t = cuda_type(s.dtype);
    CALIB_CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CALIB_CHECK(cublasLtMatrixLayoutCreate(&a, t, s.m, s.k, s.m));
    CALIB_CHECK(cublasLtMatrixLayoutCreate(&b, t, s.k, s.n, s.k));
    CALIB_CHECK(cublasLtMatrixLayoutCreate(&c, t, s.m, s.n, s.m));
    if (s.batch > 1) {
      set_batch(a, s.batch, s.m * s.k);
      set_batch(b, s.batch, s.k * s.n);
      set_batch(c, s.batch, s.m * s.n);
    }
    cublasLtMatmulPreference_t pref;
    CALIB_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    size_t ws = kWorkspaceBytes;
    CALIB_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    int returned = 0;
    cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(h, op, a, b, c, c, pref, 1, &algo, &returned);
    CALIB_CHECK(cublasLtMatmulPreferenceDestroy(pref));
    if (st != CUBLAS_STATUS_SUCCESS || returned == 0) {
      throw CalibError("cublasLtMatmulAlgoGetHeuristic", __FILE__, __LINE__,
                       "no algorithm for " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                           std::to_string(s.k) + " batch " + std::to_string(s.batch) + " " + s.dtype);
    }
  }
  ~LtGemm() {
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

// ---- communicators ----

Communicators::Communicators(const ValidationPlan& plan) : plan_(plan), comms_(plan.groups.size()) {
  for (size_t g = 0; g < plan.groups.size(); ++g) {
    std::vector<int> devs = plan.groups[g].ranks;
    comms_[g].resize(devs.size());
    CALIB_CHECK(ncclCommInitAll(comms_[g].data(), static_cast<int>(devs.size()), devs.data()));
  }
}

Communicators::Communicators(const ValidationPlan& plan, ncclComm_t world, int rank)
    : plan_(plan), comms_(plan.groups.size()) {
  std::vector<std::vector<int>> members;
  for (const PlanGroup& g : plan.groups) members.push_back(g.ranks);
  for (size_t g = 0; g < plan.groups.size(); ++g) comms_[g].assign(plan.groups[g].ranks.size(), nullptr);
  for (const std::vector<int>& round : split_rounds(members, plan.world_size())) {
    int color = NCCL_SPLIT_NOCOLOR, key = 0, mine = -1;
    for (size_t i = 0; i < round.size(); ++i) {
      const int at = position(round[i], rank);
      if (at < static_cast<int>(members[round[i]].size())) color = static_cast<int>(i), key = at, mine = round[i];
    }
    ncclComm_t c = nullptr;
    CALIB_CHECK(ncclCommSplit(world, color, key, &c, nullptr));
    if (mine >= 0) comms_[mine][key] = c;
  }
}

Communicators::~Communicators() {
  for (auto& group : comms_) {
    for (ncclComm_t c : group) {
      if (c) ncclCommDestroy(c);
    }
  }
}

int Communicators::position(int group, int rank) const {
  const std::vector<int>& r = plan_.groups[group].ranks;
  return static_cast<int>(std::find(r.begin(), r.end(), rank) - r.begin());
}

ncclComm_t Communicators::comm(int group, int rank) const { return comms_[group][position(group, rank)]; }

// ---- one rank ----

RankRunner::RankRunner(const ValidationPlan& plan, int rank, int device, const Communicators& comms, bool overlap,
                       bool nccl_connected_at_init)
    : plan_(plan), prog_(plan.ranks[rank]), rank_(rank), device_(device), overlap_(overlap) {
  CALIB_CHECK(cudaSetDevice(device));
  // Sizes and the memory check: calib/src/validation_memory.cpp (NCCL's lazy buffers counted).
  const RankBuffers need = rank_buffers(plan, rank);
  const size_t a = need.a, b = need.b, c = need.c, half = need.half, send = need.send, recv = need.recv;
  const std::string &gemm_dtype = need.gemm_dtype, &mem_dtype = need.mem_dtype, &comm_dtype = need.comm_dtype;
  size_t free_bytes = 0, total = 0;
  CALIB_CHECK(cudaMemGetInfo(&free_bytes, &total));
  const std::string why = memory_shortfall(need, free_bytes, nccl_connected_at_init, rank);
  if (!why.empty()) throw SkipRun(why);
  CALIB_CHECK(cudaStreamCreateWithFlags(&compute_, cudaStreamNonBlocking));
  CALIB_CHECK(cudaStreamCreateWithFlags(&comm_, cudaStreamNonBlocking));
  CALIB_CHECK(cublasLtCreate(&lt_));
  CALIB_CHECK(cudaMalloc(&workspace_, kWorkspaceBytes));
  for (auto [ptr, n] : {std::pair{&a_, a}, {&b_, b}, {&c_, c}, {&src_, half}, {&dst_, half}, {&send_, send}, {&recv_, recv}}) {
    CALIB_CHECK(cudaMalloc(ptr, runner_alloc_bytes(n)));
  }
  auto fill = [&](void* p, size_t bytes, const std::string& dtype, uint32_t seed) {
    std::string d = fill_dtype(dtype.empty() ? "fp32" : dtype);
    fill_random(p, runner_alloc_bytes(bytes) / dtype_size(d), d, seed, compute_);
  };
  fill(a_, a, gemm_dtype, 31 + rank);
  fill(b_, b, gemm_dtype, 32 + rank);
  fill(src_, half, mem_dtype, 33 + rank);
  fill(send_, send, comm_dtype, 34 + rank);
  CALIB_CHECK(cudaStreamSynchronize(compute_));
  int sms = 1;
  CALIB_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  copy_blocks_max_ = sms * 8;

  const size_t n = prog_.steps.size();
  step_gemm_.assign(n, nullptr);
  step_comm_.assign(n, nullptr);
  step_group_size_.assign(n, 1);
  step_peer_.assign(n, -1);
  start_.resize(n), stop_.resize(n), fork_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const PlanStep& s = prog_.steps[i];
    if (s.kind == StepKind::gemm) {
      auto key = std::make_tuple(s.m, s.n, s.k, s.batch, s.dtype);
      auto& g = gemms_[key];
      if (!g) g = std::make_unique<LtGemm>(lt_, s);
      step_gemm_[i] = g.get();
    } else if (s.group >= 0) {
      step_comm_[i] = comms.comm(s.group, rank);
      step_group_size_[i] = static_cast<int>(plan.groups[s.group].ranks.size());
      if (s.peer >= 0) step_peer_[i] = comms.position(s.group, s.peer);
    }
    CALIB_CHECK(cudaEventCreate(&start_[i]));
    CALIB_CHECK(cudaEventCreate(&stop_[i]));
    CALIB_CHECK(cudaEventCreateWithFlags(&fork_[i], cudaEventDisableTiming));
  }
  CALIB_CHECK(cudaEventCreate(&iter_start_));
  CALIB_CHECK(cudaEventCreate(&iter_stop_));
  CALIB_CHECK(cudaEventCreateWithFlags(&join_, cudaEventDisableTiming));
}

RankRunner::~RankRunner() {
  cudaSetDevice(device_);
  for (size_t i = 0; i < start_.size(); ++i) {
    cudaEventDestroy(start_[i]);
    cudaEventDestroy(stop_[i]);
    cudaEventDestroy(fork_[i]);
  }
  for (cudaEvent_t e : {iter_start_, iter_stop_, join_}) {
    if (e) cudaEventDestroy(e);
  }
  for (cudaEvent_t e : bounds_) cudaEventDestroy(e);
  if (graph_) cudaGraphExecDestroy(graph_);
  gemms_.clear();
  for (void* p : {a_, b_, c_, src_, dst_, send_, recv_, workspace_}) {
    if (p) cudaFree(p);
  }
  if (lt_) cublasLtDestroy(lt_);
  if (compute_) cudaStreamDestroy(compute_);
  if (comm_) cudaStreamDestroy(comm_);
}

void RankRunner::issue(size_t i, cudaStream_t st) {
  const PlanStep& s = prog_.steps[i];
  const size_t e = plan_dtype_bytes(s.dtype);
  const size_t count = static_cast<size_t>(s.bytes) / e;
  const float one = 1, zero = 0;
  switch (s.kind) {
    case StepKind::gemm: {
      LtGemm& g = *step_gemm_[i];
      CALIB_CHECK(cublasLtMatmul(lt_, g.op, &one, a_, g.a, b_, g.b, &zero, c_, g.c, c_, g.c, &g.algo.algo, workspace_,
                                 kWorkspaceBytes, st));
      break;
    }
    case StepKind::memory: {
      const size_t n16 = static_cast<size_t>(s.bytes) / 2 / s.kernels / 16;
      const unsigned blocks = static_cast<unsigned>(std::clamp<size_t>((n16 + 255) / 256, 1, copy_blocks_max_));
      for (int k = 0; k < s.kernels; ++k) {
        copy_kernel<<<blocks, 256, 0, st>>>(static_cast<const uint4*>(src_), static_cast<uint4*>(dst_), n16);
      }
      CALIB_CHECK(cudaGetLastError());
      break;
    }
    case StepKind::collective: {
      ncclComm_t comm = step_comm_[i];
      const ncclDataType_t t = nccl_type(s.dtype);
      const size_t p = static_cast<size_t>(step_group_size_[i]);
      if (s.collective == "all_reduce") {
        CALIB_CHECK(ncclAllReduce(send_, recv_, count, t, ncclSum, comm, st));
      } else if (s.collective == "all_gather") {
        CALIB_CHECK(ncclAllGather(send_, recv_, count / p, t, comm, st));
      } else if (s.collective == "reduce_scatter") {
        CALIB_CHECK(ncclReduceScatter(send_, recv_, count / p, t, ncclSum, comm, st));
      } else {  // all_to_all: S is each rank's whole buffer, S/p per peer (nccl-tests' alltoall)
        const size_t chunk = count / p;
        CALIB_CHECK(ncclGroupStart());
        for (size_t peer = 0; peer < p; ++peer) {
          CALIB_CHECK(ncclSend(static_cast<char*>(send_) + peer * chunk * e, chunk, t, static_cast<int>(peer), comm, st));
          CALIB_CHECK(ncclRecv(static_cast<char*>(recv_) + peer * chunk * e, chunk, t, static_cast<int>(peer), comm, st));
        }
        CALIB_CHECK(ncclGroupEnd());
      }
      break;
    }
    case StepKind::send:
      CALIB_CHECK(ncclSend(send_, count, nccl_type(s.dtype), step_peer_[i], step_comm_[i], st));
      break;
    case StepKind::recv:
      CALIB_CHECK(ncclRecv(recv_, count, nccl_type(s.dtype), step_peer_[i], step_comm_[i], st));
      break;
  }
}

void RankRunner::enqueue_steps(bool step_events, bool tag) {
  bool comm_pending = false;
  auto join = [&] {
    CALIB_CHECK(cudaEventRecord(join_, comm_));
    CALIB_CHECK(cudaStreamWaitEvent(compute_, join_, 0));
    comm_pending = false;
  };
  for (size_t i = 0; i < prog_.steps.size(); ++i) {
    const PlanStep& s = prog_.steps[i];
    cudaStream_t st = compute_;
    if (s.comm_stream && overlap_) {
      CALIB_CHECK(cudaEventRecord(fork_[i], compute_));
      CALIB_CHECK(cudaStreamWaitEvent(comm_, fork_[i], 0));
      st = comm_;
      comm_pending = true;
    } else if (s.phase == StepPhase::optimizer && comm_pending) {
      join();  // the optimizer needs every synced gradient
    }
    if (tag) push_external_id((uint64_t(rank_) << 32) | i);
    if (step_events) CALIB_CHECK(cudaEventRecord(start_[i], st));
    issue(i, st);
    if (step_events) CALIB_CHECK(cudaEventRecord(stop_[i], st));
    if (tag) pop_external_id();
  }
  if (comm_pending) join();
}

void RankRunner::enqueue_iteration(bool tag) {
  CALIB_CHECK(cudaSetDevice(device_));
  CALIB_CHECK(cudaEventRecord(iter_start_, compute_));
  enqueue_steps(true, tag);
  CALIB_CHECK(cudaEventRecord(iter_stop_, compute_));
}

std::string RankRunner::capture_graph() {
  CALIB_CHECK(cudaSetDevice(device_));
  // Thread-local: the other ranks' threads capture or run at the same time.
  cudaError_t e = cudaStreamBeginCapture(compute_, cudaStreamCaptureModeThreadLocal);
  if (e != cudaSuccess) return "cudaStreamBeginCapture: " + Status<cudaError_t>::text(e);
  std::string why;
  try {
    enqueue_steps(false, false);  // the comm stream joins the capture through the fork events
  } catch (const CalibError& err) {
    why = err.what();
  }
  cudaGraph_t g = nullptr;
  e = cudaStreamEndCapture(compute_, &g);
  if (why.empty() && e != cudaSuccess) why = "cudaStreamEndCapture: " + Status<cudaError_t>::text(e);
  if (why.empty()) {
    e = cudaGraphInstantiate(&graph_, g, 0);
    if (e != cudaSuccess) why = "cudaGraphInstantiate: " + Status<cudaError_t>::text(e);
  }
  if (g) cudaGraphDestroy(g);  // the executable graph keeps what it needs
  if (!why.empty()) {
    graph_ = nullptr;
    cudaGetLastError();  // clear the (non-sticky) error a failed capture leaves
  }
  return why;
}

std::vector<double> RankRunner::run_iteration_pass(int iterations, bool graph) {
  CALIB_CHECK(cudaSetDevice(device_));
  while (static_cast<int>(bounds_.size()) < iterations + 1) {
    cudaEvent_t e;
    CALIB_CHECK(cudaEventCreate(&e));
    bounds_.push_back(e);
  }
  if (graph) {  // first launch uploads the graph: not timed
    CALIB_CHECK(cudaGraphLaunch(graph_, compute_));
    CALIB_CHECK(cudaStreamSynchronize(compute_));
  }
  CALIB_CHECK(cudaEventRecord(bounds_[0], compute_));
  for (int it = 0; it < iterations; ++it) {
    if (graph) {
      CALIB_CHECK(cudaGraphLaunch(graph_, compute_));
    } else {
      enqueue_steps(false, false);
    }
    CALIB_CHECK(cudaEventRecord(bounds_[it + 1], compute_));
  }
  CALIB_CHECK(cudaEventSynchronize(bounds_[iterations]));
  std::vector<double> out;
  for (int it = 0; it < iterations; ++it) {
    float ms = 0;
    CALIB_CHECK(cudaEventElapsedTime(&ms, bounds_[it], bounds_[it + 1]));
    out.push_back(ms * 1e-3);
  }
  return out;
}

double RankRunner::finish_iteration(std::vector<double>* step_sum) {
  CALIB_CHECK(cudaSetDevice(device_));
  CALIB_CHECK(cudaEventSynchronize(iter_stop_));
  float ms = 0;
  if (step_sum) {
    for (size_t i = 0; i < prog_.steps.size(); ++i) {
      CALIB_CHECK(cudaEventElapsedTime(&ms, start_[i], stop_[i]));
      (*step_sum)[i] += ms * 1e-3;
    }
  }
  CALIB_CHECK(cudaEventElapsedTime(&ms, iter_start_, iter_stop_));
  return ms * 1e-3;
}

}  // namespace autoddl::calib::gpu
