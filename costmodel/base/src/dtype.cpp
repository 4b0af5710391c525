// DType names (see dtype.hpp).
#include "autoddl/costmodel/dtype.hpp"

namespace autoddl::costmodel {

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::fp32: return "fp32";
    case DType::fp16: return "fp16";
    case DType::bf16: return "bf16";
    case DType::int32: return "int32";
    case DType::int64: return "int64";
    case DType::fp8: return "fp8";
  }
  return "?";
}

bool parse_dtype(std::string_view text, DType& out) {
  struct Row {
    std::string_view name;
    DType type;
  };
  static constexpr Row rows[] = {
      {"fp32", DType::fp32},   {"float32", DType::fp32}, {"float", DType::fp32},
      {"fp16", DType::fp16},   {"float16", DType::fp16}, {"half", DType::fp16},
      {"bf16", DType::bf16},   {"bfloat16", DType::bf16}, {"int32", DType::int32},
      {"int64", DType::int64},  {"fp8", DType::fp8},       {"float8", DType::fp8},
  };
  for (const Row& r : rows) {
    if (r.name == text) {
      out = r.type;
      return true;
    }
  }
  return false;
}

}  // namespace autoddl::costmodel
