// The version text in each result row (set by experiments/CMakeLists.txt at configure time).
#include "autoddl/experiments/results.hpp"

#ifndef AUTODDL_VERSION_TEXT
#define AUTODDL_VERSION_TEXT "unknown"
#endif

namespace autoddl::experiments {

const char* autoddl_version() { return AUTODDL_VERSION_TEXT; }

}  // namespace autoddl::experiments
