// Descent from one expert layout on its own terms (cd-expert's start, also cd-mesh's on a
// pipeline mesh the Megatron-LM grid reached): cost tables for exactly the expert's
// configuration (mesh, stages, chunks, micro-batches, recompute, optimizer sharding, p2p
// overlap), its per-op signatures mapped into them at its evaluate() price, then neighbourhood
// CD; every scheme keeps the expert's sends, schedule, buckets and overlaps.
#pragma once
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "autoddl/search/searcher.hpp"
#include "megatron_grid.hpp"

namespace autoddl::search {

struct ExpertStart {
  nlohmann::json row;  // expert, expert_iteration_s, start/end objective, moves, ...
  costmodel::Scheme mapped, found;
  costmodel::CostReport mapped_report, found_report;
  bool descended = false;  // false: the signatures are not in the tables (row["skipped"])
};

// `label` names the method in the schemes and progress lines; CD stops after time_limit_s.
ExpertStart descend_from_expert(const costmodel::Graph& g, const costmodel::ClusterSpec& c, const GridPoint& p,
                                const SearchOptions& so, const std::string& label, double time_limit_s,
                                const std::function<void(const std::string&)>& progress);

}  // namespace autoddl::search
