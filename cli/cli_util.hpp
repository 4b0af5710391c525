// Small helpers shared by subcommands: byte-size parsing with nccl-tests' suffixes, number
// formatting for tables, and the common --model/--set, --cluster/--nodes options.
#pragma once
#include <charconv>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/cost_report.hpp"
#include "autoddl/costmodel/graph.hpp"
#include "autoddl/costmodel/nccl_model.hpp"
#include "autoddl/costmodel/schemed_model.hpp"

namespace autoddl::cli {

// "8", "1K", "1M", "8G" with binary multiples (K = 1024), as nccl-tests' -b/-e parse them.
// Throws InputError(flag, "", reason) on malformed text.
int64_t parse_bytes(const std::string& text, const std::string& flag);
// 1.23e9 -> "1.23 G" style human numbers for tables.
std::string human_count(double v);
// Seconds -> "12.3 ms"/"45.6 us" for tables.
std::string human_seconds(double s);
// What the memory margin is measured against: "of the 83.8 GB usable (the GPU's 85.9 GB less its
// 2.1 GB reserve: driver, CUDA context, NCCL buffers)", or that the cluster sets no reserve.
std::string memory_reserve_words(const costmodel::CostReport& r);

// "autoddl: note: <text>" on stderr: something the run repaired or left out that the user
// should know of (a torn last line of a JSONL file, a padded model).
void print_note(const std::string& text);

// `--json [FILE]` listings: JSON to FILE (atomically), or to stdout when FILE is empty.
void emit_json(const nlohmann::json& j, const std::string& file);

// A zoo model name with --set knobs, or a path to a graph JSON (then --set must be empty).
costmodel::Graph load_model(const std::string& model, const std::string& knobs);
// A sync command's model: a graph file as it is; one of AutoSync's zoo models at its per-replica
// batch on `cluster` unless --set gives batch (sync/workload.hpp), the choice printed as a note.
// `knobs` are the ones it was built with (empty for a graph file).
struct SyncModel {
  costmodel::Graph graph;
  std::map<std::string, std::string> knobs;
};
SyncModel load_sync_model(const std::string& model, const std::string& knobs, const costmodel::ClusterSpec& cluster);
// The model --model/--set costed by --scheme over --mesh (text; empty: the scheme's default),
// padded where costmodel::make_schemed_model pads it; prints its note, if any, on stderr.
costmodel::SchemedModel load_schemed_model(const std::string& model, const std::string& knobs,
                                           const std::string& spec, const costmodel::ClusterSpec& cluster,
                                           const std::string& mesh);
// True when the whole of `text` is one number of T (std::from_chars: no sign for unsigned, no
// spaces, no trailing characters, in T's range; for a double, no hex and no overflow to inf).
template <typename T>
bool parses_whole(const std::string& text, T& v) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}
// CLI11 check for seeds: text of an integer from 0 to 2^64-1 ("-1" is rejected, not wrapped, and
// 2^64 is rejected, not saturated as CLI11 would).
CLI::Validator non_negative_integer();
// CLI11 check for counts: text of an int >= `min`, the message stating [min, INT_MAX] (CLI11's own
// range checks print the bounds of a double: "not in range 2.2250738585072014e-308 to 1.79...e+308").
CLI::Validator integer_at_least(int min);
// Gives every INT option of `app` and its subcommands the check integer_at_least(INT_MIN): CLI11's
// own refusal of 4294967297 ("Could not convert") names no range.
void check_int_options(CLI::App& app);

// --nccl-algo / --nccl-proto (NCCL_ALGO's and NCCL_PROTO's names, any case; empty: any) as a
// restriction of NCCL's choice; throws InputError naming the option whose value is not a name.
costmodel::NcclRestriction parse_nccl_restriction(const std::string& algo, const std::string& proto);
// CLI11 check for fractions and tolerances: a finite number >= `min` (not nan, not inf).
CLI::Validator finite_at_least(double min);

// Adds --model and --set to a subcommand.
void add_model_options(CLI::App& sub, std::string& model, std::string& knobs);

// --cluster (required) and --nodes; --mesh too when `mesh` is given.
void add_cluster_options(CLI::App& sub, std::string& cluster, std::optional<int>& nodes,
                         std::string* mesh = nullptr);
// --scheme (required): an expert scheme or a scheme JSON file.
void add_scheme_option(CLI::App& sub, std::string& scheme);

// Runs argv (argv[0] a path) with stdout and stderr into the file `log`; returns the exit
// status, 128 + signal, or -1 if it did not start. For the GPU programs calib builds.
int run_logged(const std::vector<std::string>& argv, const std::string& log);

}  // namespace autoddl::cli
