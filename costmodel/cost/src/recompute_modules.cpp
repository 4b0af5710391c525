// The --recompute-modules table (recompute_modules.hpp). Membership follows Megatron-Core's
// TransformerLayer and MLA modules (megatron/core/transformer/transformer_layer.py,
// multi_latent_attention.py, moe/experts.py): core_attn the attention core; mla_up_proj the
// up-projections from the q and kv latents and the RoPE split/expand that feed the core;
// mlp a dense layer's MLP (MoE layers are the moe module's, as Megatron-Core skips its mlp
// checkpoint for a MoELayer); moe_act the experts' activation (act(gate) ⊙ up); layernorm the
// layer's two input norms (not MLA's q/kv latent norms); moe the whole MoE layer; shared_experts
// the shared experts' MLP. A multi-token-prediction block's decoder layer is a layer like the
// others (Megatron-Core builds it as a TransformerLayer with the same recompute options).
#include "autoddl/costmodel/recompute_modules.hpp"

namespace autoddl::costmodel {

namespace {

// The op's name inside its layer ("attn.q_b"), "" outside layers.
std::string_view local(const Op& op) {
  if (op.block.empty() || op.name.size() <= op.block.size()) return {};
  return std::string_view(op.name).substr(op.block.size() + 1);
}
bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool core_attn(const Graph&, const Op& op) { return op.attention_core; }

bool mla_up_proj(const Graph&, const Op& op) {
  const std::string_view n = local(op);
  if (n == "attn.q_b" || n == "attn.k_b" || n == "attn.v_b" || n == "attn.k") return true;
  for (std::string_view p : {"attn.q.", "attn.k.", "attn.v.", "attn.k_nope.", "attn.k_rope"}) {
    if (starts(n, p)) return true;
  }
  return false;
}

bool mlp(const Graph&, const Op& op) {
  const std::string_view n = local(op);
  return starts(n, "ffn.") && n != "ffn.residual" && n != "ffn.dropout";
}

bool moe_act(const Graph&, const Op& op) {
  const std::string_view n = local(op);
  return n == "moe.experts.gate_act" || n == "moe.experts.swiglu" || n == "moe.experts.geglu";
}

bool layernorm(const Graph&, const Op& op) {
  if (op.kind != OpKind::layer_norm || op.block.empty() || starts(local(op), "attn.")) return false;
  // An MTP block's own norms are not its decoder layer's input norms (MultiTokenPredictionLayer's
  // enorm, hnorm and final_layernorm sit outside its TransformerLayer).
  const std::string_view n = local(op);
  return !(is_mtp_block(op.block) && (n == "enorm" || n == "hnorm" || n == "final_norm"));
}

bool moe(const Graph&, const Op& op) { return starts(local(op), "moe."); }

bool shared_experts(const Graph&, const Op& op) {
  const std::string_view n = local(op);
  return starts(n, "moe.shared.") && n != "moe.shared.sum";
}

std::string always(const Graph&) { return ""; }

std::string needs_mla(const Graph& g) {
  for (const Op& op : g.ops) {
    if (local(op) == "attn.q_b" || local(op) == "attn.kv_a") return "";
  }
  return g.name + " has no multi-head latent attention (mla_up_proj recomputes its up-projections)";
}

std::string needs_experts(const Graph& g) {
  return routed_experts(g) > 0 ? "" : g.name + " has no experts (a Mixture-of-Experts module)";
}

std::string needs_shared(const Graph& g) {
  for (const Op& op : g.ops) {
    if (starts(local(op), "moe.shared.")) return "";
  }
  return g.name + " has no shared experts";
}

std::string needs_dense_mlp(const Graph& g) {
  for (const Op& op : g.ops) {
    if (mlp(g, op)) return "";
  }
  return g.name + " has no dense MLP layer (MoE layers are the moe module's)";
}

}  // namespace

const std::vector<RecomputeModuleInfo>& recompute_modules() {
  static const std::vector<RecomputeModuleInfo> table = {
      {"core_attn", "the attention core (scores, softmax, dropout, context)", core_attn, always},
      {"mla_up_proj", "MLA's up-projections from the q/kv latents and the RoPE parts", mla_up_proj, needs_mla},
      {"mlp", "a dense layer's MLP", mlp, needs_dense_mlp},
      {"moe_act", "the experts' activation, act(gate) * up", moe_act, needs_experts},
      {"layernorm", "the layer's input norms (before attention and before the MLP)", layernorm, always},
      {"moe", "the whole MoE layer (router, dispatch, experts, combine)", moe, needs_experts},
      {"shared_experts", "the shared experts' MLP", shared_experts, needs_shared},
  };
  return table;
}

uint32_t recompute_module_bit(std::string_view name) {
  const auto& rows = recompute_modules();
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].name == name) return 1u << i;
  }
  return 0;
}

bool parse_recompute_modules(std::string_view text, uint32_t& bits, std::string& bad) {
  bits = 0;
  while (true) {
    const size_t plus = text.find('+');
    const std::string_view name = text.substr(0, plus);
    const uint32_t bit = recompute_module_bit(name);
    if (bit == 0) {
      bad = std::string(name);
      return false;
    }
    bits |= bit;
    if (plus == std::string_view::npos) return true;
    text.remove_prefix(plus + 1);
  }
}

std::string recompute_modules_text(uint32_t bits, std::string_view sep) {
  if (bits == 0) return "core_attn";
  std::string out;
  const auto& rows = recompute_modules();
  for (size_t i = 0; i < rows.size(); ++i) {
    if (bits & (1u << i)) out += (out.empty() ? "" : std::string(sep)) + std::string(rows[i].name);
  }
  return out;
}

bool in_recompute_module(const Graph& g, const Op& op, uint32_t bits) {
  if (bits == 0) return op.attention_core;
  const auto& rows = recompute_modules();
  for (size_t i = 0; i < rows.size(); ++i) {
    if ((bits & (1u << i)) && rows[i].contains(g, op)) return true;
  }
  return false;
}

}  // namespace autoddl::costmodel
