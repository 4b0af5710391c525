// The subcommand table. A subcommand is one cli/cmd_<name>.cpp exposing a setup function that
// adds its options to a CLI11 subcommand and returns the function that runs it (exit code).
#pragma once
#include <functional>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace autoddl::cli {

using RunFn = std::function<int()>;

struct Command {
  std::string_view name;
  std::string_view help;
  RunFn (*setup)(CLI::App& sub);
};

const std::vector<Command>& commands();

}  // namespace autoddl::cli
