#pragma once
// Megatron-Core's --recompute-modules (with --recompute-granularity selective): which parts of
// each transformer layer backward re-runs instead of keeping their outputs. One table row per
// module, under Megatron's name; a scheme holds the set as bits (Scheme::recompute_modules), 0
// meaning Megatron's default, core_attn. Modules are found by op kind and by the op names the
// zoo's builders give inside a layer (attn.*, ffn.*, moe.*).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "autoddl/costmodel/graph.hpp"

namespace autoddl::costmodel {

struct RecomputeModuleInfo {
  std::string_view name;         // Megatron's: core_attn, mla_up_proj, mlp, moe_act, layernorm, moe, shared_experts
  std::string_view description;  // what backward re-runs
  bool (*contains)(const Graph& g, const Op& op);
  // Why the module cannot apply to g (mla_up_proj without latent attention), "" when it can.
  std::string (*unavailable)(const Graph& g);
};

const std::vector<RecomputeModuleInfo>& recompute_modules();

uint32_t recompute_module_bit(std::string_view name);  // 0 for an unknown name

// "mla_up_proj+mlp" -> bits; returns false and sets `bad` to the first unknown name.
bool parse_recompute_modules(std::string_view text, uint32_t& bits, std::string& bad);
// The names of `bits` joined by `sep` ("mla_up_proj+mlp"), "core_attn" for 0.
std::string recompute_modules_text(uint32_t bits, std::string_view sep = "+");

// Whether op is in one of the modules `bits` names (0: core_attn).
bool in_recompute_module(const Graph& g, const Op& op, uint32_t bits);

}  // namespace autoddl::costmodel
