// The model zoo: named graph builders with knobs (`--set key=value,...`). One row per model in
// zoo/registry.cpp; a model's builder is one file zoo/<name>.cpp. Every builder produces a
// finalized Graph whose `batch` is the global batch knob.
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "autoddl/costmodel/graph.hpp"

namespace autoddl::costmodel {

struct KnobSpec {
  std::string name;
  std::string default_value;
  std::string help;
};

// Knob values for one build, validated against the model's KnobSpecs. Getters throw
// InputError("--set", "<knob>", reason) on a value of the wrong type or range.
class Knobs {
 public:
  Knobs(std::string model, const std::vector<KnobSpec>& specs,
        const std::map<std::string, std::string>& overrides);
  int64_t get_int(const std::string& name, int64_t min_value = 1) const;
  std::string get_string(const std::string& name) const;
  DType get_dtype(const std::string& name) const;
  // Throws InputError("--set", knob, reason): for builders' cross-knob checks.
  [[noreturn]] void fail(const std::string& knob, const std::string& reason) const;
  const std::map<std::string, std::string>& values() const { return values_; }

 private:
  std::string model_;
  std::map<std::string, std::string> values_;
};

struct ZooModel {
  std::string_view name;
  std::string_view description;
  std::vector<KnobSpec> knobs;
  Graph (*build)(const Knobs& knobs);
};

const std::vector<ZooModel>& zoo_models();
const ZooModel* find_zoo_model(std::string_view name);  // nullptr if unknown

// "k=v,k2=v2" -> map; throws InputError("--set", "", reason) on malformed text.
std::map<std::string, std::string> parse_knob_list(std::string_view text);

// Builds a zoo model; throws InputError for an unknown model ("--model") or knob ("--set").
Graph build_zoo_model(std::string_view name, const std::map<std::string, std::string>& overrides);

}  // namespace autoddl::costmodel
