// `autoddl sync train|eval|search|transfer`: the learned half of AutoSync (rankers trained on
// dataset records, the low-shot search, transfer across pairs), added to `autoddl sync` by
// cmd_sync.cpp; kept apart so each file stays one subject.
#pragma once
#include <functional>
#include <optional>

#include <CLI/CLI.hpp>

namespace autoddl::cli {

// Adds the subcommands to `sync`; the returned function runs the one that was parsed, or
// returns nullopt when another `sync` subcommand was.
std::function<std::optional<int>()> setup_sync_learn(CLI::App& sync);
// `sync search` (cmd_sync_search.cpp), the same contract.
std::function<std::optional<int>()> setup_sync_search(CLI::App& sync);
// `sync export` and `sync dataset import` (cmd_sync_autodist.cpp), the same contract.
std::function<std::optional<int>()> setup_sync_autodist(CLI::App& sync, CLI::App& dataset);

}  // namespace autoddl::cli

namespace autoddl::sync {
struct PairMetrics;
}

namespace autoddl::cli {

// Per-pair and overall rows: pairs, accuracy, Kendall tau, top-1 regret, and the accuracy over
// the pairs at least m.min_gap apart.
void print_metrics_table(const char* title, const sync::PairMetrics& m);

}  // namespace autoddl::cli
