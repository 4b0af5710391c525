// Strategy <-> JSON (schema: docs/sync-strategy-json.md). Loading is strict: unknown keys,
// wrong types and unknown enum names throw InputError(source, "<field path>", reason); the
// checks against a model and a cluster are validate_strategy's (strategy.hpp).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "autoddl/sync/strategy.hpp"

namespace autoddl::sync {

inline constexpr const char* kStrategyFormat = "autoddl-sync-strategy";
inline constexpr int kStrategyVersion = 1;

nlohmann::json strategy_to_json(const Strategy& s);
Strategy strategy_from_json(const nlohmann::json& j, const std::string& source);

// Reads, parses and validates against the variables and cluster.
Strategy load_strategy_file(const std::string& path, const std::vector<Variable>& vars,
                            const costmodel::ClusterSpec& c);

}  // namespace autoddl::sync
