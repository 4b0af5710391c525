// One libFuzzer program per format: compiled once per target with -DAUTODDL_FUZZ_FORMAT="graph"
// (and so on; see tests/fuzz/CMakeLists.txt). Only built with -DAUTODDL_FUZZ=ON and clang.
#include <cstddef>
#include <cstdint>
#include <string>

#include "targets.hpp"

#ifndef __clang__
// g++'s -fsanitize-coverage=trace-cmp also hooks floating-point comparisons, which libFuzzer
// does not implement: ignore them.
extern "C" void __sanitizer_cov_trace_cmpf(float, float) {}
extern "C" void __sanitizer_cov_trace_cmpd(double, double) {}
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const autoddl::fuzz::Target* target = autoddl::fuzz::find_target(AUTODDL_FUZZ_FORMAT);
  autoddl::fuzz::run_checked(*target, std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
