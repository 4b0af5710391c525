// cupti_tracer: wraps any CUDA program and writes a Chrome trace (Perfetto, chrome://tracing)
// of its GPU activity: kernels (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), copies and memsets,
// ts/dur in µs, pid = device, tid = stream.
//   cupti_tracer --out trace.json -- ./build/calib/gpu/nccl_all_reduce -e 64M
// One file, two targets (the reason it is one file: they share the protocol below): built with
// AUTODDL_CUPTI_TRACER_MAIN it is the launcher, which sets CUDA_INJECTION64_PATH to
// libautoddl_cupti_tracer.so (next to it) and AUTODDL_TRACE_OUT, then execs the program; built
// without, it is that library: the CUDA driver calls InitializeInjection() in the traced
// process, which starts CUPTI, and the trace is written at exit. The traced program's own CUPTI
// use (the harness's kernel-time pass, validate_runner's per-step pass) sees
// CUDA_INJECTION64_PATH and stays off (cupti_owned_elsewhere), so this library is the process's
// only CUPTI client and its trace covers the whole run.
#include <cstdio>
#include <cstdlib>
#include <string>

#ifdef AUTODDL_CUPTI_TRACER_MAIN

#include <unistd.h>

#include <filesystem>
#include <vector>

int main(int argc, char** argv) {
  std::string out = "trace.json";
  int i = 1;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--out" && i + 1 < argc) {
      out = argv[++i];
    } else if (a == "--") {
      ++i;
      break;
    } else {
      break;
    }
  }
  if (i >= argc) {
    std::fprintf(stderr, "usage: cupti_tracer [--out trace.json] -- program [args...]\n");
    return 2;
  }
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  std::filesystem::path lib = self.parent_path() / "libautoddl_cupti_tracer.so";
  if (ec || !std::filesystem::exists(lib)) {
    std::fprintf(stderr, "cupti_tracer: %s not found\n", lib.c_str());
    return 2;
  }
  setenv("CUDA_INJECTION64_PATH", lib.c_str(), 1);
  setenv("AUTODDL_TRACE_OUT", std::filesystem::absolute(out).c_str(), 1);
  execvp(argv[i], argv + i);
  std::perror(argv[i]);
  return 127;
}

#else  // the injection library

#include "cupti_activity.hpp"

using autoddl::calib::gpu::ActivityRecorder;

namespace {

void write_trace_at_exit() {
  const char* out = std::getenv("AUTODDL_TRACE_OUT");
  std::string path = out && *out ? out : "trace.json";
  auto recs = ActivityRecorder::instance().all();
  autoddl::calib::gpu::write_chrome_trace(recs, path);
  std::fprintf(stderr, "cupti_tracer: %zu GPU activities (%llu dropped) -> %s\n", recs.size(),
               static_cast<unsigned long long>(ActivityRecorder::instance().dropped()), path.c_str());
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  static bool started = false;
  if (started) return 1;
  started = true;
  ActivityRecorder& rec = ActivityRecorder::instance();
  rec.as_injection();  // the one CUPTI owner of the traced process (issue 16, defect 3)
  rec.keep_all(true);
  if (!rec.start()) {
    std::fprintf(stderr, "cupti_tracer: CUPTI unavailable: %s\n", rec.init().c_str());
    return 0;
  }
  std::atexit(write_trace_at_exit);
  return 1;
}

#endif
