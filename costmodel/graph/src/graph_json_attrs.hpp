// Reading and writing an op's "attrs" object in graph JSON (the attribute table lives in
// graph_json_attrs.cpp). Internal to costmodel/graph/src.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "autoddl/costmodel/graph.hpp"
#include "json_reader.hpp"

namespace autoddl::costmodel {

// Reads `attrs` (nullptr when the op has none) for an op of `kind` at JSON path `path`;
// rejects keys the kind does not take and missing required ones.
OpAttrs read_op_attrs(const JsonReader& r, const nlohmann::json* attrs, const std::string& path,
                      OpKind kind, std::string_view kind_name);
// The attributes the kind uses, as written in JSON; empty object for kinds without any.
nlohmann::json write_op_attrs(const Op& op);

}  // namespace autoddl::costmodel
