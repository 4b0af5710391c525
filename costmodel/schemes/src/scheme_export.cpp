// The export formats' table and the layout check every format shares (scheme_export.hpp).
#include "autoddl/costmodel/scheme_export.hpp"

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"

namespace autoddl::costmodel {

std::string write_megatron_lm(const Graph& graph, const MegatronLayout& layout);      // export_megatron_lm.cpp
std::string write_megatron_bridge(const Graph& graph, const MegatronLayout& layout);  // export_megatron_bridge.cpp
std::string write_torchtitan(const Graph& graph, const MegatronLayout& layout);       // export_torchtitan.cpp

const std::vector<ExportFormat>& export_formats() {
  static const std::vector<ExportFormat> formats = {
      {"megatron-lm",
       "Megatron-LM core_r0.11.0 (NVIDIA/Megatron-LM commit 7c00175e, megatron/training/arguments.py)",
       write_megatron_lm},
      {"megatron-bridge",
       "Megatron-Bridge v0.6.0 (NVIDIA-NeMo/Megatron-Bridge commit 51885cf1, a recipe's ConfigContainer `cfg`)",
       write_megatron_bridge},
      {"torchtitan",
       "torchtitan v0.2.2 (pytorch/torchtitan commit 73a0e697, torchtitan/config/job_config.py; TOML)",
       write_torchtitan},
  };
  return formats;
}

const ExportFormat& find_export_format(std::string_view name) {
  std::string known;
  for (const ExportFormat& f : export_formats()) {
    if (f.name == name) return f;
    known += (known.empty() ? "" : ", ") + std::string(f.name);
  }
  throw InputError("--to", "", "unknown format '" + std::string(name) + "' (known: " + known + ")");
}

namespace {

bool has_attention(const Graph& graph) {
  for (const Op& op : graph.ops)
    if (op.attention_core) return true;
  return false;
}

}  // namespace

std::optional<MegatronLayout> exportable_layout(const Graph& graph, const ClusterSpec& cluster, const Scheme& scheme,
                                                std::string& why_not) {
  // Megatron-LM, Megatron-Bridge and torchtitan train transformers: a model without attention (a
  // CNN, an MLP) has no Megatron model to put the layout on, whatever its mesh.
  if (!has_attention(graph)) {
    why_not = "Megatron trains transformer models; " + graph.name + " has no attention";
    return std::nullopt;
  }
  MegatronMatch m = match_megatron_layout(graph, cluster, scheme);
  if (!m.layout) why_not = "not a Megatron layout: " + m.why_not;
  return m.layout;
}

std::optional<ApproximateLayout> nearest_layout(const Graph& graph, const ClusterSpec& cluster, const Scheme& scheme,
                                                std::string& why_not, bool& is_layout) {
  is_layout = false;
  if (!has_attention(graph)) {
    exportable_layout(graph, cluster, scheme, why_not);  // says why, without matching
    return std::nullopt;
  }
  const MegatronMatch m = match_megatron_layout(graph, cluster, scheme);
  if (m.layout) {
    is_layout = true;
    why_not = "the scheme is a Megatron layout: nothing to approximate";
    return std::nullopt;
  }
  why_not = "not a Megatron layout: " + m.why_not;  // as exportable_layout says it
  if (!m.nearest) return std::nullopt;
  return ApproximateLayout{*m.nearest, make_scheme(m.nearest->spec, graph, cluster, {}), why_not};
}

std::string export_scheme(const ExportFormat& format, const Graph& graph, const ClusterSpec& cluster,
                          const Scheme& scheme) {
  std::string why_not;
  const std::optional<MegatronLayout> layout = exportable_layout(graph, cluster, scheme, why_not);
  if (!layout) throw InputError("--scheme", "", std::string(format.name) + " cannot run it: " + why_not);
  return format.write(graph, *layout);
}

}  // namespace autoddl::costmodel
