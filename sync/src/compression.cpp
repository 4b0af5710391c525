// The cast pricing is described in compression.hpp's header comment.
#include "autoddl/sync/compression.hpp"

#include <string_view>
#include <unordered_map>

#include "autoddl/costmodel/compute.hpp"

namespace autoddl::sync {

bool compresses(const Synchronizer& s, const Variable& v) {
  return s.arch == Arch::all_reduce && s.compressor == Compressor::fp16 && !v.sparse &&
         v.dtype == costmodel::DType::fp32;
}

bool uses_compression(const Strategy& s, const std::vector<Variable>& vars) {
  std::unordered_map<std::string_view, const Variable*> by_name;
  for (const Variable& v : vars) by_name.emplace(v.name, &v);
  for (const VarConfig& vc : s.vars) {
    auto it = by_name.find(vc.var);
    if (it == by_name.end()) continue;
    for (const Synchronizer& p : vc.parts) {
      if (compresses(p, *it->second)) return true;
    }
  }
  return false;
}

DenseBytes dense_bytes(const Synchronizer& s, const Variable& v, double bytes) {
  if (!compresses(s, v)) return {bytes, 0};
  return {bytes / 2, bytes};
}

double fp16_cast_s(const costmodel::GpuSpec& gpu, double fp32_bytes) {
  if (fp32_bytes <= 0) return 0;
  // Each cast touches 1.5x the fp32 bytes: 4 + 2 bytes per element of 4.
  const double cast_bytes = 1.5 * fp32_bytes;
  using costmodel::OpKind, costmodel::DType;
  return costmodel::kernel_time_s(gpu, OpKind::unary, DType::fp32, 0, cast_bytes) +
         costmodel::kernel_time_s(gpu, OpKind::unary, DType::fp16, 0, cast_bytes);
}

}  // namespace autoddl::sync
