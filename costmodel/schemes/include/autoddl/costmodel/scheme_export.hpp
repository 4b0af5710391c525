// Export of a scheme to a training framework's own settings (`autoddl export --to FORMAT`). A
// format is one file (export_<name>.cpp) writing a MegatronLayout as that framework spells it,
// for one named framework version, plus one row of export_formats(). Only Megatron layouts are
// exported: a per-op scheme that no framework flag expresses is refused with its first differing
// op (megatron_layout.hpp).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "autoddl/costmodel/megatron_layout.hpp"
#include "autoddl/costmodel/scheme.hpp"

namespace autoddl::costmodel {

struct ExportFormat {
  std::string_view name;     // "megatron-lm"
  std::string_view version;  // the framework version whose names it writes, with its source
  // The settings, one per line; throws InputError("--scheme", option, why) for an option the
  // version cannot express.
  std::string (*write)(const Graph& graph, const MegatronLayout& layout);
};

const std::vector<ExportFormat>& export_formats();
// Throws InputError("--to", "", "unknown format 'x' (known: ...)").
const ExportFormat& find_export_format(std::string_view name);

// The Megatron layout `scheme` is, when the formats can export it (a transformer model on a
// Megatron layout); else nullopt and `why_not` says why in one line.
std::optional<MegatronLayout> exportable_layout(const Graph& graph, const ClusterSpec& cluster, const Scheme& scheme,
                                                std::string& why_not);

// A scheme that is no Megatron layout, exported approximately (`export --approximate`): the
// nearest layout (MegatronMatch::nearest) and its own lowering, which the caller prices, so the
// user sees what the approximation costs next to what the scheme would take.
struct ApproximateLayout {
  MegatronLayout layout;
  Scheme scheme;        // layout.spec lowered on the graph and cluster
  std::string why_not;  // why the scheme itself is not a layout (exportable_layout's reason)
};
// nullopt with `why_not` when there is no nearest layout either (a model without attention, a
// mesh no Megatron layout has), or when the scheme is a layout itself (`is_layout`: export it
// exactly). One match (match_megatron_layout) in all.
std::optional<ApproximateLayout> nearest_layout(const Graph& graph, const ClusterSpec& cluster, const Scheme& scheme,
                                                std::string& why_not, bool& is_layout);

// The settings that run `scheme`; throws InputError("--scheme", "", why) when it is not a
// layout the framework runs.
std::string export_scheme(const ExportFormat& format, const Graph& graph, const ClusterSpec& cluster,
                          const Scheme& scheme);

}  // namespace autoddl::costmodel
