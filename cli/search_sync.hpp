// `autoddl search --sync [N]`: AutoSync's low-shot search over the best scheme's data-parallel
// gradient sync (sync/scheme_sync_search.hpp), printed after the search's table.
#pragma once
#include <cstdint>

#include <nlohmann/json.hpp>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/graph.hpp"
#include "autoddl/search/searcher.hpp"

namespace autoddl::cli {

// Prints the DDP and best-strategy lines and returns the report's "sync" object; a scheme
// without one data-parallel all-reduce (pipelined, ZeRO, one replica) is a skipped result.
nlohmann::json search_best_sync(const costmodel::Graph& g, const costmodel::ClusterSpec& c,
                                const search::SearchResult& best, int trials, uint64_t seed);

}  // namespace autoddl::cli
