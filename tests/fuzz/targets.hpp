// Fuzz targets, one per input format: the loader, then (when it accepts) its first consumer,
// with the invariants every accepted input must keep. Shared by the libFuzzer programs
// (fuzz_main.cpp, built with -DAUTODDL_FUZZ=ON) and the ctest replay of tests/fuzz/regressions/.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace autoddl::fuzz {

struct Target {
  const char* format;  // the folder under tests/fuzz/regressions/ and the program's suffix
  void (*run)(const std::string& data);
};

const std::vector<Target>& targets();
const Target* find_target(std::string_view format);

// Runs `t` on `data`. Returns when the input is accepted or rejected with InputError; aborts
// (a crash the fuzzer records) when another exception escapes or an invariant is broken.
void run_checked(const Target& t, const std::string& data);

}  // namespace autoddl::fuzz
