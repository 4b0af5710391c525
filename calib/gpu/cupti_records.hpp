// Which CUPTI activity record layouts this build reads (issue 16, defect 6). CUPTI hands out
// records in the layout of the library's own version (CUDA 12.0: CUpti_ActivityKernel9, 13.0:
// Kernel10, 13.2: Kernel11; memcpy Memcpy5 until 12.6, Memcpy6 from 12.8; memset Memset4 from
// 11.6), so the structs are picked here by the CUPTI_API_VERSION of the toolkit found at build
// time (cupti_version.h: v19 = CUDA 12.0 ... v28 = 12.9 Update 1, then xxyyzz from 13.0), and
// ActivityRecorder refuses a libcupti loaded at run time whose layouts differ. A CUPTI newer than
// this table builds fine and runs without kernel times (a note says why) until a row is added.
#pragma once
#include <cupti.h>

#include <cstdint>
#include <string>

namespace autoddl::calib::gpu {

// Record versions (the N of CUpti_ActivityKernelN, MemcpyN, MemsetN); kernel 0: not known.
struct RecordVersions {
  int kernel = 0, memcpy = 0, memset = 0;
  constexpr bool known() const { return kernel != 0; }
  constexpr bool same(const RecordVersions& o) const {
    return kernel == o.kernel && memcpy == o.memcpy && memset == o.memset;
  }
};

// The table, by CUPTI API version. Older than CUDA 12.0 (v19) or newer than the last row checked
// against NVIDIA's CUPTI release notes (13.2): not known.
constexpr RecordVersions cupti_record_versions(uint32_t api) {
  if (api >= 130300) return {};             // 13.3+: Kernel12 and later layouts, not checked yet
  if (api >= 130200) return {11, 6, 4};     // CUDA 13.2
  if (api >= 130000) return {10, 6, 4};     // CUDA 13.0, 13.1
  if (api >= 100) return {};                // not a CUPTI version number
  if (api >= 26) return {9, 6, 4};          // CUDA 12.8, 12.9
  if (api >= 19) return {9, 5, 4};          // CUDA 12.0 .. 12.6
  return {};
}

inline constexpr RecordVersions kBuiltRecords = cupti_record_versions(CUPTI_API_VERSION);

// "" when records of the libcupti loaded at run time (cuptiGetVersion) can be read by a build
// against CUPTI `built`, else why not (for the "CUPTI unavailable" note).
inline std::string cupti_records_unreadable(uint32_t built, uint32_t loaded) {
  const RecordVersions b = cupti_record_versions(built), l = cupti_record_versions(loaded);
  auto text = [](const RecordVersions& v) {
    return "Kernel" + std::to_string(v.kernel) + "/Memcpy" + std::to_string(v.memcpy) + "/Memset" +
           std::to_string(v.memset);
  };
  if (!b.known()) {
    return "CUPTI API version " + std::to_string(built) +
           " is not in calib/gpu/cupti_records.hpp (CUDA 12.0 .. 13.2 are): no kernel times from this build";
  }
  if (!l.same(b)) {
    return "the loaded libcupti (API version " + std::to_string(loaded) + (l.known() ? ", " + text(l) : "") +
           ") differs from the one built against (" + std::to_string(built) + ", " + text(b) +
           "): rebuild against the toolkit whose libcupti is loaded";
  }
  return "";
}

// The structs of this build's row. Only the fields every version keeps under the same name are
// read (start, end, deviceId, streamId, correlationId, grid, block, name, copyKind, bytes).
// One preprocessor choice per record kind, the same rows as cupti_record_versions (the test
// checks the installed CUPTI's).
#if (CUPTI_API_VERSION >= 19 && CUPTI_API_VERSION < 100) || (CUPTI_API_VERSION >= 130000 && CUPTI_API_VERSION < 130300)
#if CUPTI_API_VERSION >= 130200
using KernelRecord = CUpti_ActivityKernel11;
#elif CUPTI_API_VERSION >= 130000
using KernelRecord = CUpti_ActivityKernel10;
#else
using KernelRecord = CUpti_ActivityKernel9;
#endif
#if CUPTI_API_VERSION >= 26
using MemcpyRecord = CUpti_ActivityMemcpy6;
#else
using MemcpyRecord = CUpti_ActivityMemcpy5;
#endif
using MemsetRecord = CUpti_ActivityMemset4;
#else
#define AUTODDL_CUPTI_RECORDS_UNKNOWN 1  // no kernel times from this build (ActivityRecorder says why)
#endif

}  // namespace autoddl::calib::gpu
