// Small helpers shared by subcommands: byte-size parsing with nccl-tests' suffixes, number
// formatting for tables, and the common --model/--set, --cluster/--nodes options.
#pragma once
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>

#include "autoddl/costmodel/graph.hpp"

namespace autoddl::cli {

// "8", "1K", "1M", "8G" with binary multiples (K = 1024), as nccl-tests' -b/-e parse them.
// Throws InputError(flag, "", reason) on malformed text.
int64_t parse_bytes(const std::string& text, const std::string& flag);
// 1.23e9 -> "1.23 G" style human numbers for tables.
std::string human_count(double v);
// Seconds -> "12.3 ms"/"45.6 us" for tables.
std::string human_seconds(double s);

// `--json [FILE]` listings: JSON to FILE (atomically), or to stdout when FILE is empty.
void emit_json(const nlohmann::json& j, const std::string& file);

// A zoo model name with --set knobs, or a path to a graph JSON (then --set must be empty).
costmodel::Graph load_model(const std::string& model, const std::string& knobs);
// Adds --model and --set to a subcommand.
void add_model_options(CLI::App& sub, std::string& model, std::string& knobs);

}  // namespace autoddl::cli
