// The one harness of calib's GPU microbenchmarks (nccl-tests' common.cu, google/benchmark's
// runner): options and the 8 B .. ≥1 GiB size sweep, warm-up and timed iterations (CUDA events,
// then a CUPTI pass for kernel time), the fixed output columns (a table with a units row on
// stdout, and rows in an autoddl-measurements/1 JSON file), skipped rows with a reason, and
// CALIB_CHECK, which turns a failed CUDA/cuBLAS/cuDNN/NCCL/CUPTI call into CalibError with the
// call, file:line and the library's message. Each benchmark file holds only its own shapes,
// byte counts, initialization and the call it times. Depends on CUDA and the C++ library only.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace autoddl::calib::gpu {

class CalibError : public std::runtime_error {
 public:
  CalibError(const std::string& call, const char* file, int line, const std::string& message)
      : std::runtime_error(call + " at " + file + ":" + std::to_string(line) + ": " + message) {}
};

// Status<T>: how to read one library's status type. Each library's header specializes it
// (cudaError_t and CUptiResult here; cuBLAS, cuDNN, NCCL next to their benchmarks).
template <class T>
struct Status;

template <>
struct Status<cudaError_t> {
  static bool ok(cudaError_t e) { return e == cudaSuccess; }
  static std::string text(cudaError_t e) {
    return std::string(cudaGetErrorString(e)) + " (" + cudaGetErrorName(e) + ")";
  }
};

template <class T>
void check(T status, const char* call, const char* file, int line) {
  if (!Status<T>::ok(status)) throw CalibError(call, file, line, Status<T>::text(status));
}

#define CALIB_CHECK(call) ::autoddl::calib::gpu::check((call), #call, __FILE__, __LINE__)

struct Options {
  size_t min_bytes = 8;
  size_t max_bytes = size_t(1) << 30;
  double factor = 2;
  int warmup = 5;
  int iters = 20;
  int cupti_iters = 5;          // iterations of the CUPTI pass (0: no kernel times)
  bool check = true;            // verify results (#wrong), where the benchmark can
  bool quick = false;           // smaller sweeps, for a first look
  int ngpus = 0;                // 0: all visible
  int batch = 32;               // conv
  bool tf32 = true;             // conv: fp32 may use TF32 tensor cores (PyTorch's cuDNN default)
  bool fp8_fast_accum = false;  // gemm fp8: cuBLASLt fast accumulation (TE's forward GEMM; its
                                // dgrad and wgrad GEMMs accumulate in full precision, the default)
  std::vector<int64_t> dims;    // gemm: M, N, K values of the grid
  std::vector<std::string> dtypes = {"fp32", "fp16", "bf16"};
  bool dtypes_given = false;    // --dtypes was on the command line (else gemm adds fp8 where it runs)
  std::string json_path;        // result rows; empty: stdout table only
  std::string trace_path;       // Chrome trace of every CUPTI activity of the run
  std::string nccl_log;         // NCCL programs: NCCL_DEBUG_FILE pattern (nccl_debug_setup)
  // One process per GPU under a launcher (MPI builds of the nccl_* programs): the world is split
  // into groups of group_ranks ranks, ranks_per_node on each node they span, groups_per_node of
  // them running at once (calib/src/calibrate_plan.cpp). 0: one process drives its GPUs.
  int group_ranks = 0;
  int ranks_per_node = 0;
  int groups_per_node = 1;
  // How the timed loop is launched: "stream" (op() called iters times), "graph" (the iters calls
  // captured once into one CUDA graph per stream and launched as one, nccl-tests -G), or "" (the
  // program's default: launch_mode(); time_op takes "" as "stream").
  std::string launch;
  std::vector<std::string> argv;

  std::vector<size_t> sizes() const;  // min_bytes, ×factor, .. ≤ max_bytes
};

struct BenchInfo {
  const char* name;         // "nccl_all_reduce", the JSON "benchmark"
  const char* description;  // one line for --help
};

// Parses the shared flags; prints usage and exits 2 on a bad one, 0 on --help.
Options parse_options(int argc, char** argv, const BenchInfo& info);

// The fixed columns of every benchmark (STYLE: size, count, dtype, time, algbw, busbw, #wrong).
struct Row {
  std::string name;       // "all_reduce", "gemm", "conv", "copy", ...
  double size_bytes = 0;  // collectives: nccl-tests size; kernels: bytes read + written
  int64_t count = 0;
  std::string dtype;
  int ranks = 1;
  int ranks_per_node = 1;
  int groups_per_node = 1;  // groups measured at once (written when > 1)
  double time_us = 0;
  double kernel_us = -1;  // < 0: not traced
  double algbw_GBps = 0;
  double busbw_GBps = 0;
  double flops = 0;
  int64_t wrong = -1;     // < 0: not checked
  std::vector<std::pair<std::string, double>> shape;       // numeric parameters
  std::vector<std::pair<std::string, std::string>> tags;   // text parameters
  std::string skipped;    // non-empty: not measured, and why
};

// Collects rows, prints each as it comes, writes the JSON file at the end (temp + rename).
class Report {
 public:
  Report(const BenchInfo& info, const Options& opt);
  void version(const std::string& library, const std::string& version);
  void add(Row row);
  void skip(Row row, const std::string& reason);
  void note(const std::string& line);  // "# line" on stdout
  // Writes the JSON (and the trace, if asked); returns the exit code.
  int finish();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// The launch of the timed loop: --launch if given, else "graph" where one host thread launches
// for all of the process's GPUs (the single-process NCCL programs: launching every GPU's kernels
// one after the other from that thread makes small calls host-bound, which overstated
// small-message α; issue 16, defect 5; graph at every world size there, so the group sizes
// one fit combines are timed alike), else "stream" (one process per GPU under MPI, compute
// programs).
inline std::string launch_mode(const Options& opt, bool one_thread_for_all_gpus) {
  if (!opt.launch.empty()) return opt.launch;
  return one_thread_for_all_gpus ? "graph" : "stream";
}

struct Timed {
  double time_us = 0;     // CUDA events, mean per iteration (slowest stream)
  double kernel_us = -1;  // CUPTI: GPU activity time per iteration (busiest device); < 0: none
  std::string launch;     // how the timed loop ran: "stream" or "graph"
  std::string launch_note;  // why a graph was asked for but not used; "" otherwise
};

// Runs op() opt.warmup times, then opt.iters times between CUDA events recorded on every
// stream (stream i on devices[i]), then opt.cupti_iters times under CUPTI activity tracing.
// With opt.launch "graph" the opt.iters calls are captured (one graph per stream, all captured
// at once, as nccl-tests -G does) and each graph is launched once, untimed, then once between
// the events; a capture that fails falls back to "stream" with the reason in launch_note.
Timed time_op(const Options& opt, const std::vector<int>& devices,
              const std::vector<cudaStream_t>& streams, const std::function<void()>& op);

// The current time as ISO 8601 UTC ("2026-11-21T12:00:00Z"), for provenance.
std::string now_utc();
// A CUDA version number as text: 13000 -> "13.0".
std::string version_text(int v);

// A first CUDA call that fails cleanly without a GPU: "" if devices are usable, else the reason.
std::string no_gpu_reason();

// The oldest Linux driver branch a runtime of CUDA `runtime_version` (13000 = 13.0) runs on with
// minor-version compatibility: 13.x R580, 12.x R525, 11.x R450 (CUDA release notes, table 3);
// 0 if unknown. cudart is linked statically, so this is the toolkit the programs were built with.
constexpr int min_driver_branch(int runtime_version) {
  return runtime_version >= 14000 ? 0 : runtime_version >= 13000 ? 580 : runtime_version >= 12000 ? 525
       : runtime_version >= 11000 ? 450 : 0;
}
// Why a driver reporting CUDA `driver_version` cannot run this build's runtime, with what to do;
// "" if it can (issue 16, defect 6: a CUDA 13 build fails on the R535/R550 drivers of many
// H100 clusters).
inline std::string driver_too_old(int driver_version, int runtime_version) {
  if (driver_version <= 0 || driver_version / 1000 >= runtime_version / 1000) return "";
  auto text = [](int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); };
  std::string need = min_driver_branch(runtime_version) ? " (R" + std::to_string(min_driver_branch(runtime_version)) + "+)" : "";
  return "the driver supports CUDA " + text(driver_version) + ", these programs were built with CUDA " +
         text(runtime_version) + need + ": rebuild with a CUDA " + std::to_string(driver_version / 1000) +
         ".x toolkit (cmake finds the one on PATH or CUDAToolkit_ROOT) or update the driver";
}

// The benchmark's main: parses options, makes the Report, runs body(opt, report) and turns a
// missing GPU into a skipped row and a CalibError into one error line and exit code 1.
int run_main(int argc, char** argv, const BenchInfo& info,
             const std::function<void(const Options&, Report&)>& body);

// Fills n elements of `dtype` ("fp32", "fp16", "bf16", "fp8" = E4M3) at p with values in [-1, 1) from a hash
// of (index, seed): cheap, deterministic, and not all zeros (zeros make tensor cores cooler and
// faster than real data).
void fill_random(void* p, size_t n, const std::string& dtype, uint32_t seed, cudaStream_t s);
size_t dtype_size(const std::string& dtype);

}  // namespace autoddl::calib::gpu
