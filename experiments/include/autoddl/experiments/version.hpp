// What made a result row: the autoddl binary's version (the project version and the commit it
// was built from, for the record) and its model version, a hash of the sources that determine the
// numbers (cmake/model_sources.txt: costmodel, search, sim, sync and the in-process cells). A row
// of another model version is stale: `sweep run` recomputes it unless --reuse. Both are written
// at every build by experiments/cmake/write_version.cmake.
#pragma once

namespace autoddl::experiments {

// "0.1.0 (git 2f1eaac)", "-dirty" when built with uncommitted edits.
const char* autoddl_version();
// 12 hex digits; experiments/figures/model_version.py computes the same from a source tree.
const char* model_version();
// How many files the model version hashes.
int model_version_files();

}  // namespace autoddl::experiments
