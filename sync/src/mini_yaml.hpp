// The YAML that AutoDist's resource specs and AutoSync's runtime files use, read into JSON:
// block mappings and sequences by indentation (a sequence item may open a mapping: "- address:
// x"), flow sequences and mappings of scalars ([0, 1], {a: 1}), plain and quoted scalars
// (numbers, true/false/yes/no, null/~), '#' comments and a leading '---'. Anchors, aliases, tags,
// block scalars (| >) and tabs in indentation are refused with InputError(source, "line N",
// reason): a file that uses them is not one these formats produce. Private to sync/src.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace autoddl::sync {

nlohmann::json parse_mini_yaml(const std::string& text, const std::string& source);

}  // namespace autoddl::sync
