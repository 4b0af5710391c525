// Knob handling for the model zoo (zoo.hpp): parsing `--set k=v,k2=v2`, checking every knob
// against the model's KnobSpecs, typed getters that name the knob in their errors, and
// build_zoo_model(), the one entry point the CLI and the experiments use.
#include <charconv>
#include <set>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/text_integer.hpp"
#include "autoddl/costmodel/zoo.hpp"

namespace autoddl::costmodel {

namespace {
// Upper bounds on integer knobs (documented in docs/reports.md, "Bad input and limits"): `layers` bounds the graph's size, the
// rest keep shapes, byte counts and the search's counters far from int64/int overflow.
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxKnobValue = int64_t{1} << 24;

std::string join_knob_names(const std::vector<KnobSpec>& specs) {
  std::string out;
  for (const KnobSpec& s : specs) out += (out.empty() ? "" : ", ") + s.name;
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}
}  // namespace

Knobs::Knobs(std::string model, const std::vector<KnobSpec>& specs,
             const std::map<std::string, std::string>& overrides)
    : model_(std::move(model)) {
  for (const KnobSpec& s : specs) values_[s.name] = s.default_value;
  for (const auto& [key, value] : overrides) {
    if (!values_.count(key)) {
      throw InputError("--set", key,
                       "unknown knob for " + model_ + " (knobs: " + join_knob_names(specs) + ")");
    }
    values_[key] = value;
  }
}

int64_t Knobs::get_int(const std::string& name, int64_t min_value) const {
  const std::string& text = values_.at(name);
  int64_t v = 0;
  const int64_t max_value = name == "layers" ? kMaxLayers : kMaxKnobValue;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc::result_out_of_range) fail(name, integer_range_reason(text, min_value, max_value));
  if (ec != std::errc() || end != text.data() + text.size()) {
    fail(name, "must be an integer (got '" + text + "')");
  }
  if (v < min_value) {
    fail(name, "must be at least " + std::to_string(min_value) + " (got " + text + ")");
  }
  if (v > max_value) fail(name, "must be at most " + std::to_string(max_value) + " (got " + text + ")");
  return v;
}

std::string Knobs::get_string(const std::string& name) const { return values_.at(name); }

DType Knobs::get_dtype(const std::string& name) const {
  const std::string& text = values_.at(name);
  DType t;
  if (!parse_dtype(text, t)) {
    fail(name, "unknown dtype '" + text + "' (known: fp32, fp16, bf16, fp8, int32, int64)");
  }
  return t;
}

void Knobs::fail(const std::string& knob, const std::string& reason) const {
  throw InputError("--set", knob, reason);
}

std::map<std::string, std::string> parse_knob_list(std::string_view text) {
  std::map<std::string, std::string> out;
  if (trim(text).empty()) return out;
  const std::string whole(text);
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view item = trim(text.substr(start, comma - start));
    if (item.empty()) {
      throw InputError("--set", "", "empty item in '" + whole + "' (expected key=value,...)");
    }
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      throw InputError("--set", "",
                       "expected key=value, got '" + std::string(item) + "' in '" + whole + "'");
    }
    std::string key(trim(item.substr(0, eq)));
    std::string value(trim(item.substr(eq + 1)));
    if (key.empty()) {
      throw InputError("--set", "", "missing knob name before '=' in '" + std::string(item) + "'");
    }
    if (value.empty()) throw InputError("--set", "", "missing value for knob '" + key + "'");
    if (!out.emplace(key, value).second) {
      throw InputError("--set", "", "knob '" + key + "' is given twice");
    }
    start = comma + 1;
  }
  return out;
}

Graph build_zoo_model(std::string_view name, const std::map<std::string, std::string>& overrides) {
  const ZooModel* model = find_zoo_model(name);
  if (!model) {
    std::string known;
    for (const ZooModel& m : zoo_models())
      known += (known.empty() ? "" : ", ") + std::string(m.name);
    throw InputError("--model", "",
                     "unknown model '" + std::string(name) + "' (known: " + known + ")");
  }
  Knobs knobs(std::string(model->name), model->knobs, overrides);
  Graph g = model->build(knobs);
  // dtype=fp8: Transformer Engine's recipe, FP8 GEMMs over bf16 tensors (model_dtype).
  auto dtype = overrides.find("dtype");
  DType t;
  g.fp8_gemms = dtype != overrides.end() && parse_dtype(dtype->second, t) && t == DType::fp8;
  return g;
}

}  // namespace autoddl::costmodel
