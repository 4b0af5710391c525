// The CUPTI record layouts calib/gpu reads are picked by CUPTI_API_VERSION (issue 16, defect 6):
// this translation unit compiles the selection against the installed CUPTI, checks the table
// row it took, and that the fields the reader uses sit where every record version of that
// header puts them (so an older or newer row reads the same bytes).
#include <catch2/catch.hpp>

#include <cstddef>
#include <type_traits>

#include "cupti_records.hpp"
#include "harness.hpp"

using namespace autoddl::calib::gpu;

#ifndef AUTODDL_CUPTI_RECORDS_UNKNOWN
static_assert(kBuiltRecords.known(), "the installed CUPTI has a row, so the record structs are defined");
#if CUPTI_API_VERSION >= 130000 && CUPTI_API_VERSION < 130200  // the toolkit CI builds with
static_assert(std::is_same_v<KernelRecord, CUpti_ActivityKernel10> && kBuiltRecords.kernel == 10);
static_assert(std::is_same_v<MemcpyRecord, CUpti_ActivityMemcpy6> && kBuiltRecords.memcpy == 6);
static_assert(std::is_same_v<MemsetRecord, CUpti_ActivityMemset4> && kBuiltRecords.memset == 4);
#endif
// The fields cupti_activity.cpp's convert() reads, at the offsets of the 12.x records too.
static_assert(offsetof(KernelRecord, start) == offsetof(CUpti_ActivityKernel9, start));
static_assert(offsetof(KernelRecord, end) == offsetof(CUpti_ActivityKernel9, end));
static_assert(offsetof(KernelRecord, deviceId) == offsetof(CUpti_ActivityKernel9, deviceId));
static_assert(offsetof(KernelRecord, streamId) == offsetof(CUpti_ActivityKernel9, streamId));
static_assert(offsetof(KernelRecord, correlationId) == offsetof(CUpti_ActivityKernel9, correlationId));
static_assert(offsetof(KernelRecord, gridX) == offsetof(CUpti_ActivityKernel9, gridX));
static_assert(offsetof(KernelRecord, blockZ) == offsetof(CUpti_ActivityKernel9, blockZ));
static_assert(offsetof(KernelRecord, name) == offsetof(CUpti_ActivityKernel9, name));
static_assert(offsetof(MemcpyRecord, start) == offsetof(CUpti_ActivityMemcpy5, start));
static_assert(offsetof(MemcpyRecord, bytes) == offsetof(CUpti_ActivityMemcpy5, bytes));
static_assert(offsetof(MemcpyRecord, copyKind) == offsetof(CUpti_ActivityMemcpy5, copyKind));
static_assert(offsetof(MemcpyRecord, correlationId) == offsetof(CUpti_ActivityMemcpy5, correlationId));
static_assert(offsetof(MemsetRecord, bytes) == offsetof(CUpti_ActivityMemset4, bytes));
static_assert(offsetof(MemsetRecord, streamId) == offsetof(CUpti_ActivityMemset4, streamId));
#endif

TEST_CASE("the installed CUPTI selects a known record row", "[calib][cupti]") {
  INFO("CUPTI_API_VERSION " << CUPTI_API_VERSION);
#ifdef AUTODDL_CUPTI_RECORDS_UNKNOWN
  CHECK_FALSE(kBuiltRecords.known());
  CHECK_FALSE(cupti_records_unreadable(CUPTI_API_VERSION, CUPTI_API_VERSION).empty());
#else
  CHECK(kBuiltRecords.known());
  CHECK(cupti_records_unreadable(CUPTI_API_VERSION, CUPTI_API_VERSION).empty());
#endif
}

TEST_CASE("record versions follow the CUPTI release notes, 12.0 to 13.2", "[calib][cupti]") {
  using V = RecordVersions;
  CHECK(cupti_record_versions(18).known() == false);            // CUDA 11.8
  CHECK(cupti_record_versions(19).same(V{9, 5, 4}));            // 12.0
  CHECK(cupti_record_versions(24).same(V{9, 5, 4}));            // 12.6
  CHECK(cupti_record_versions(26).same(V{9, 6, 4}));            // 12.8: Memcpy6
  CHECK(cupti_record_versions(28).same(V{9, 6, 4}));            // 12.9 Update 1
  CHECK(cupti_record_versions(130000).same(V{10, 6, 4}));       // 13.0: Kernel10
  CHECK(cupti_record_versions(130001).same(V{10, 6, 4}));
  CHECK(cupti_record_versions(130100).same(V{10, 6, 4}));       // 13.1
  CHECK(cupti_record_versions(130200).same(V{11, 6, 4}));       // 13.2: Kernel11
  CHECK_FALSE(cupti_record_versions(130300).known());           // 13.3: Kernel12, not checked
  CHECK_FALSE(cupti_record_versions(12000).known());            // a CUDA_VERSION, not CUPTI's
}

TEST_CASE("a libcupti with other record layouts than the build's is refused, one with the same is not",
          "[calib][cupti]") {
  CHECK(cupti_records_unreadable(130001, 130000).empty());  // 13.0 Update 1 vs 13.0: same layouts
  CHECK(cupti_records_unreadable(27, 28).empty());          // 12.9 vs 12.9 Update 1
  const std::string older = cupti_records_unreadable(130001, 24);  // built 13.0, 12.6 loaded
  CHECK(older.find("Kernel9/Memcpy5/Memset4") != std::string::npos);
  CHECK(older.find("Kernel10/Memcpy6/Memset4") != std::string::npos);
  CHECK(older.find("rebuild") != std::string::npos);
  CHECK_FALSE(cupti_records_unreadable(130001, 130300).empty());  // newer than the table
  CHECK(cupti_records_unreadable(130300, 130300).find("not in calib/gpu/cupti_records.hpp") != std::string::npos);
}

TEST_CASE("a driver older than the build's CUDA gets the reason and the fix", "[calib][driver]") {
  using autoddl::calib::gpu::driver_too_old;
  using autoddl::calib::gpu::min_driver_branch;
  CHECK(min_driver_branch(13000) == 580);
  CHECK(min_driver_branch(12040) == 525);
  CHECK(driver_too_old(13000, 13000).empty());
  CHECK(driver_too_old(13010, 13000).empty());  // newer driver
  CHECK(driver_too_old(12090, 12040).empty());  // same major: minor-version compatibility
  const std::string r535 = driver_too_old(12020, 13000);  // R535 reports CUDA 12.2
  CHECK(r535.find("CUDA 12.2") != std::string::npos);
  CHECK(r535.find("CUDA 13.0 (R580+)") != std::string::npos);
  CHECK(r535.find("CUDA 12.x toolkit") != std::string::npos);
}
