// File input/output shared by every layer: reading JSON with errors that name the file and
// the field, and writing results atomically (temp file + rename) so a failed run never leaves a
// half-written result behind. Every loader parses through parse_json_text, which turns all of
// nlohmann's errors (malformed text, numbers outside the double range, duplicate keys, nesting
// deeper than kMaxJsonDepth) into InputError(file, "<field path>", reason).
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "autoddl/costmodel/error.hpp"

namespace autoddl {

// Limits on input files: only regular files of at most kMaxInputBytes are read, and JSON may
// nest at most kMaxJsonDepth objects/arrays deep.
inline constexpr int64_t kMaxInputBytes = int64_t{256} << 20;
inline constexpr int kMaxJsonDepth = 64;

// Called with the field path ("collectives[3]") and the value of each object as soon as the
// parser has read it, before the rest of the document: a loader checks entries as they arrive
// (a duplicate among 100,000 stops the parse at the second). It may throw InputError.
using JsonObjectHook = std::function<void(const std::string& path, const nlohmann::json& object)>;

// Parses JSON text from `source` (a file name for messages); throws InputError(source, field, reason).
nlohmann::json parse_json_text(const std::string& text, const std::string& source, const JsonObjectHook& hook = {});
// Reads and parses a JSON file; throws InputError(path, "", reason) if missing or malformed.
nlohmann::json read_json_file(const std::string& path, const JsonObjectHook& hook = {});
// Reads a whole regular file of at most kMaxInputBytes; throws InputError(path, "", reason).
std::string read_text_file(const std::string& path);
// Writes `text` to `path` via `path.tmp.<pid>`, fsync and rename; throws InputError(path, "",
// reason). Temporaries of `path` left by a process that no longer runs (a SIGKILL mid-write)
// are removed first; with install_temp_cleanup(), SIGINT and SIGTERM remove the ones in flight.
void write_file_atomic(const std::string& path, const std::string& text);
// Installs SIGINT/SIGTERM handlers that unlink this process's in-flight temporaries, then die
// of the signal as before. The CLI calls it once at start.
void install_temp_cleanup();
void write_json_atomic(const std::string& path, const nlohmann::json& j, int indent = 2);
// j.dump(indent) that never throws on invalid UTF-8 in strings (bytes become U+FFFD).
std::string dump_json(const nlohmann::json& j, int indent = -1);

// True when `v` is a JSON integer in [lo, hi] (unsigned values beyond int64 included).
inline bool json_int_in(const nlohmann::json& v, int64_t lo, int64_t hi) {
  if (!v.is_number_integer()) return false;
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    return hi >= 0 && u <= static_cast<uint64_t>(hi) && (lo <= 0 || u >= static_cast<uint64_t>(lo));
  }
  const int64_t x = v.get<int64_t>();
  return x >= lo && x <= hi;
}

// Runs `load()` and turns any nlohmann error a loader lets through (a value of the wrong type
// read without a check) into InputError(source, "", reason), so callers see one error type.
template <class F>
auto guard_json(const std::string& source, F&& load) -> decltype(load()) {
  try {
    return load();
  } catch (const nlohmann::json::exception& e) {
    throw InputError(source, "", std::string("unexpected JSON value (") + e.what() + ")");
  }
}

}  // namespace autoddl
