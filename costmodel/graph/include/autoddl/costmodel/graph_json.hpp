// The JSON graph format (docs/graph-json.md): user models load through the same Graph IR and
// the same validation as zoo models. save() writes what load() reads (round trip).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "autoddl/costmodel/graph.hpp"

namespace autoddl::costmodel {

// Parses and finalizes; throws InputError(source, "<json path>", reason) on any problem.
Graph graph_from_json(const nlohmann::json& j, const std::string& source);
Graph load_graph_file(const std::string& path);
nlohmann::json graph_to_json(const Graph& g);

}  // namespace autoddl::costmodel
