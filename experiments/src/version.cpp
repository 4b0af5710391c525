// The version texts of result rows (version.hpp): experiments/cmake/write_version.cmake writes
// them at every build (the commit the binary was built from, and the hash of its model sources).
#include "autoddl/experiments/version.hpp"

#include "autoddl_version_text.h"

#ifndef AUTODDL_VERSION_TEXT
#define AUTODDL_VERSION_TEXT "unknown"
#endif
#ifndef AUTODDL_MODEL_VERSION
#define AUTODDL_MODEL_VERSION "unknown"
#define AUTODDL_MODEL_FILES 0
#endif

namespace autoddl::experiments {

const char* autoddl_version() { return AUTODDL_VERSION_TEXT; }
const char* model_version() { return AUTODDL_MODEL_VERSION; }
int model_version_files() { return AUTODDL_MODEL_FILES; }

}  // namespace autoddl::experiments
