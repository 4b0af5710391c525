// A compact strategy form for reports that hold hundreds of strategies (`sync search --json`
// records every run's, issue 32 item 5): the variable names once, then per strategy one entry
// per variable in that order, a part as a short string instead of an object:
//   "ps:<server>[:lr][:async]"            PS shard (lr = local replication)
//   "ar:<group>[:fp16][:ring|tree|hierarchical]"  all-reduce shard
//   an unpartitioned variable is its one part string; a partitioned one is
//   {"axis": a, "shards": n, "uneven": b, "parts": [...]}.
// BERT-large's 398 variables take about 3 KB instead of strategy JSON's 90 KB.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autoddl/sync/strategy.hpp"

namespace autoddl::sync {

inline constexpr const char* kCompactStrategiesFormat = "autoddl-sync-strategies-compact";

// {"id", "builder", "vars": [...]} with vars in the order of `vars` (s must cover each once).
nlohmann::json strategy_to_compact(const Strategy& s, const std::vector<Variable>& vars);
// Back to a Strategy over `names` (the report's "variables"); throws InputError(source, where...).
Strategy strategy_from_compact(const nlohmann::json& j, const std::vector<std::string>& names,
                               const std::string& source, const std::string& where);

// A `sync search --json` report's run `run`'s strategy (its "strategies" table), or the best
// strategy when run < 0. Throws InputError naming the report's field.
Strategy strategy_from_search_report(const nlohmann::json& report, int run, const std::string& source);
// True when `j` looks like a `sync search --json` report (has "runs" and "strategies").
bool is_search_report(const nlohmann::json& j);

}  // namespace autoddl::sync
