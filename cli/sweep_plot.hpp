// `autoddl sweep plot DIR --kind K --out FILE`: a user's own sweep drawn by the figure code the
// repository's figures use (experiments/figures/sweep_plot.py, which reuses sweeplib and the
// figure scripts), run with python3 and matplotlib.
#pragma once
#include <string>

#include <CLI/CLI.hpp>

namespace autoddl::cli {

struct SweepPlotOptions {
  std::string dir, kind = "speedup", out, baseline;
};

// Adds the `plot` subcommand to `sweep`, filling `o`.
CLI::App* add_sweep_plot(CLI::App& sweep, SweepPlotOptions& o);
// Checks DIR and --out, finds the plot script and python3, runs it; returns the exit code.
// A missing python3 or matplotlib is an InputError naming the package to install.
int run_sweep_plot(const SweepPlotOptions& o);

}  // namespace autoddl::cli
