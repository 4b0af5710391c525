// Element types of tensors and their sizes. Peak FLOP/s in a cluster preset are per dtype,
// so the dtype also picks the compute roof.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace autoddl::costmodel {

// fp8 is the E4M3/E5M2 format of Hopper's tensor cores (Transformer Engine): in the zoo it is
// a compute type of GEMMs (Graph::fp8_gemms), while tensors stay bf16.
enum class DType : uint8_t { fp32, fp16, bf16, int32, int64, fp8 };

constexpr int64_t dtype_bytes(DType t) {
  switch (t) {
    case DType::fp32: return 4;
    case DType::fp16: return 2;
    case DType::bf16: return 2;
    case DType::int32: return 4;
    case DType::int64: return 8;
    case DType::fp8: return 1;
  }
  return 0;
}

std::string_view dtype_name(DType t);
// Parses "fp32"/"fp16"/"bf16"/"int32"/"int64"/"fp8" (also "float32", "float16", "bfloat16", "float8");
// returns false on an unknown name.
bool parse_dtype(std::string_view text, DType& out);

}  // namespace autoddl::costmodel
