// JsonReader: typed access to parsed JSON that fails with InputError(source, "<json path>",
// reason), e.g. "tensors[1].shape[0]: must be at least 1". Checks exact key sets so typos are
// errors, not silently ignored fields. Internal to costmodel/graph/src (used by the graph loader).
#pragma once
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "autoddl/costmodel/error.hpp"

namespace autoddl::costmodel {

struct JsonReader {
  using json = nlohmann::json;
  std::string source;

  [[noreturn]] void fail(const std::string& path, const std::string& reason) const {
    throw InputError(source, path, reason);
  }

  static std::string join(std::initializer_list<std::string_view> keys) {
    std::string out;
    for (std::string_view k : keys) out += (out.empty() ? "" : ", ") + std::string(k);
    return out;
  }

  // `j` must be an object with all of `required` and nothing outside required ∪ optional.
  void check_keys(const json& j, const std::string& path,
                  std::initializer_list<std::string_view> required,
                  std::initializer_list<std::string_view> optional) const {
    if (!j.is_object()) fail(path, "expected an object");
    for (const auto& [key, value] : j.items()) {
      bool known = false;
      for (std::string_view k : required) known = known || k == key;
      for (std::string_view k : optional) known = known || k == key;
      if (!known) {
        std::string allowed = join(required);
        if (optional.size()) allowed += ", " + join(optional);
        fail(sub(path, key), "unknown key (allowed: " + allowed + ")");
      }
    }
    for (std::string_view k : required) {
      if (!j.contains(k)) fail(sub(path, std::string(k)), "missing required field");
    }
  }

  static std::string sub(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }
  static std::string at(const std::string& path, size_t i) {
    return path + "[" + std::to_string(i) + "]";
  }

  std::string string(const json& j, const std::string& path, bool non_empty = true) const {
    if (!j.is_string()) fail(path, "expected a string");
    std::string s = j.get<std::string>();
    if (non_empty && s.empty()) fail(path, "must not be empty");
    return s;
  }
  int64_t integer(const json& j, const std::string& path, int64_t min_value,
                  int64_t max_value = std::numeric_limits<int64_t>::max()) const {
    if (!j.is_number_integer()) fail(path, "expected an integer");
    if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(max_value)) {
      fail(path, "is out of range (at most " + std::to_string(max_value) + ")");
    }
    int64_t v = j.get<int64_t>();
    if (v < min_value) fail(path, "must be at least " + std::to_string(min_value));
    if (v > max_value) fail(path, "is out of range (at most " + std::to_string(max_value) + ")");
    return v;
  }
  int small_int(const json& j, const std::string& path, int min_value) const {
    return static_cast<int>(integer(j, path, min_value, std::numeric_limits<int>::max()));
  }
  bool boolean(const json& j, const std::string& path) const {
    if (!j.is_boolean()) fail(path, "expected true or false");
    return j.get<bool>();
  }
  const json& array(const json& j, const std::string& path) const {
    if (!j.is_array()) fail(path, "expected an array");
    return j;
  }
};

}  // namespace autoddl::costmodel
