// The scheme JSON format (docs/scheme-json.md): a mesh, one signature per op (by op name),
// parameter storage, pipeline chunks and micro-batching. Every command that produces a scheme
// writes this, and `--scheme FILE.json` reads it back; loading checks every signature against
// the op's legal nd signatures, so a file cannot smuggle in an impossible split.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/graph.hpp"
#include "autoddl/costmodel/scheme.hpp"

namespace autoddl::costmodel {

nlohmann::json scheme_to_json(const Scheme& s, const Graph& g);
// Throws InputError(source, "<json path>", reason).
Scheme scheme_from_json(const nlohmann::json& j, const Graph& g, const ClusterSpec& c,
                        const std::string& source);
Scheme load_scheme_file(const std::string& path, const Graph& g, const ClusterSpec& c);

}  // namespace autoddl::costmodel
