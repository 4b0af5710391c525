// The version text in each result row: experiments/cmake/write_version.cmake writes it at every
// build (the project version and the commit the binary was built from).
#include "autoddl/experiments/results.hpp"
#include "autoddl_version_text.h"

#ifndef AUTODDL_VERSION_TEXT
#define AUTODDL_VERSION_TEXT "unknown"
#endif

namespace autoddl::experiments {

const char* autoddl_version() { return AUTODDL_VERSION_TEXT; }

}  // namespace autoddl::experiments
