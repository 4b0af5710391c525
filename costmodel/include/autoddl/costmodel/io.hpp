// File input/output shared by every layer: reading JSON with errors that name the file and
// the line, and writing results atomically (temp file + rename) so a failed run never leaves a
// half-written result behind.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace autoddl {

// Reads and parses a JSON file; throws InputError(path, "", reason) if missing or malformed.
nlohmann::json read_json_file(const std::string& path);
// Reads a whole text file; throws InputError(path, "", reason) if it cannot be read.
std::string read_text_file(const std::string& path);
// Writes `text` to `path` via `path.tmp.<pid>` + rename; throws InputError(path, "", reason).
void write_file_atomic(const std::string& path, const std::string& text);
void write_json_atomic(const std::string& path, const nlohmann::json& j, int indent = 2);

}  // namespace autoddl
