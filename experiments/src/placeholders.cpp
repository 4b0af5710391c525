// {gpus}-style placeholders in knob values and scheme strings, so one config line covers every
// cluster size (weak scaling: "batch": "{gpus*8}"; Megatron with tensor parallelism inside a
// node: "megatron:tp={gpus_per_node},pp=1,dp={nodes}").
#include <optional>

#include "autoddl/costmodel/text_integer.hpp"
#include "autoddl/experiments/config.hpp"

namespace autoddl::experiments {

bool substitute_placeholders(const std::string& text, const ClusterSize& size, std::string& out,
                             std::string& error) {
  out.clear();
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '}') {
      error = "'}' without '{'";
      return false;
    }
    if (text[i] != '{') {
      out += text[i++];
      continue;
    }
    const size_t end = text.find('}', i);
    if (end == std::string::npos) {
      error = "unclosed '{' in '" + text + "'";
      return false;
    }
    const std::string body = text.substr(i + 1, end - i - 1);
    size_t op = body.find_first_of("*/");
    const std::string var = body.substr(0, op);
    long long v = 0;
    if (var == "gpus") v = size.gpus;
    else if (var == "nodes") v = size.nodes;
    else if (var == "gpus_per_node") v = size.gpus_per_node;
    else {
      error = "unknown placeholder '{" + body + "}' (use {gpus}, {nodes}, {gpus_per_node}, optionally *K or /K)";
      return false;
    }
    if (op != std::string::npos) {
      const std::string num = body.substr(op + 1);
      // At most 9 digits, so gpus (<= 2^20) times the factor stays far inside 64 bits.
      constexpr int64_t kMaxFactor = 999999999;
      const std::optional<int64_t> factor = integer_in(num, 1, kMaxFactor);
      if (!factor) {
        error = "'{" + body + "}': the factor " + integer_range_reason(num, 1, kMaxFactor);
        return false;
      }
      const long long k = *factor;
      if (body[op] == '*') {
        v *= k;
      } else {
        if (v % k != 0) {
          error = "'{" + body + "}': " + var + " = " + std::to_string(v) + " is not divisible by " + num;
          return false;
        }
        v /= k;
      }
    }
    out += std::to_string(v);
    i = end + 1;
  }
  return true;
}

}  // namespace autoddl::experiments
