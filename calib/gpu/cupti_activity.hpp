// GPU activity records from the CUPTI Activity API (calibration.md §3.6): kernels from
// CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (which, unlike ..._KERNEL, does not serialize kernels),
// plus memcpy and memset. One process-wide recorder: the harness turns its records into kernel
// time per iteration, cupti_tracer into a Chrome trace, validate_runner into kernel time per
// step (external correlation ids pushed around each step's launches). Needs libcupti only (no
// CUDA runtime), so the tracer can be injected into any CUDA program.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace autoddl::calib::gpu {

struct ActivityRecord {
  std::string kind;  // "kernel", "memcpy", "memset", or "external" (no times: a correlation)
  std::string name;  // kernel name (mangled), or "memcpy DtoD" / "memset"
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t device = 0;
  uint32_t stream = 0;
  uint32_t correlation = 0;
  uint64_t external_id = 0;        // "external": the id pushed while `correlation` was launched
  uint64_t bytes = 0;              // memcpy / memset
  int32_t grid[3] = {0, 0, 0};     // kernel
  int32_t block[3] = {0, 0, 0};
};

// libcupti is one per process: one activity-callback pair, one set of enabled kinds. A program
// started under an injected CUPTI client (our cupti_tracer, Nsight Systems, ...: the driver loads
// CUDA_INJECTION64_PATH) must leave CUPTI to it, or each would re-register the callbacks and
// disable the other's tracing (issue 16, defect 3). "" when this recorder may own CUPTI, else
// the reason, for the program's output. `injection_path`: getenv("CUDA_INJECTION64_PATH");
// `is_injection`: this recorder is the injected library itself.
inline std::string cupti_owned_elsewhere(const char* injection_path, bool is_injection) {
  if (is_injection || injection_path == nullptr || *injection_path == '\0') return "";
  return std::string("CUPTI belongs to the injected tracer (CUDA_INJECTION64_PATH=") + injection_path +
         "): this program's own CUPTI pass and --trace are off; the tracer records every kernel";
}

class ActivityRecorder {
 public:
  static ActivityRecorder& instance();
  // Registers the buffer callbacks once; "" on success, else why CUPTI cannot be used (another
  // client owns it: cupti_owned_elsewhere).
  const std::string& init();
  // This recorder is the injected library (cupti_tracer): it owns CUPTI even though
  // CUDA_INJECTION64_PATH is set. Call before init().
  void as_injection();
  // Enables the activity kinds after dropping records still pending from before (a whole-run
  // trace keeps CUPTI on between passes); false if CUPTI is unusable.
  bool start();
  // Disables (unless keep_all: a whole-run trace stays on), flushes, returns the records since
  // the last stop.
  std::vector<ActivityRecord> stop();
  void keep_all(bool on);     // also keep every record for all()
  // Also record "external" correlations (needs the runtime and driver API kinds too, so
  // tracing costs more): call before start().
  void correlate_external(bool on);
  std::vector<ActivityRecord> all();
  uint64_t dropped() const;

 private:
  ActivityRecorder() = default;
};

// Marks the calling thread's CUDA launches until the matching pop with `id` (CUPTI's CUSTOM0
// external correlation kind); false if CUPTI refused.
bool push_external_id(uint64_t id);
void pop_external_id();

// GPU-busy time per iteration: Σ record durations on each device / iterations, the busiest
// device's value (a collective's ranks run concurrently on their devices).
double busy_us_per_iter(const std::vector<ActivityRecord>& recs, int iterations);

// Chrome trace-event JSON ({"traceEvents": [...]}, "ph":"X", ts/dur in µs from the first
// record, pid = device, tid = stream), with process/thread name metadata. Written directly
// (no JSON library): names are escaped here.
void write_chrome_trace(const std::vector<ActivityRecord>& recs, const std::string& path);

}  // namespace autoddl::calib::gpu
