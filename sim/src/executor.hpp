// Runs a Program in this process: creates the SimGrid Engine, builds the platform, starts one
// actor per stream and collects the SimResult. Call at most once per process (simulate.cpp
// forks around it).
#pragma once
#include "autoddl/sim/simulate.hpp"

namespace autoddl::sim {

SimResult execute_program(const Program& program, const costmodel::ClusterSpec& cluster,
                          const SimOptions& options);

// Fills the SimResult's derived figures (per stream, per device, totals) from task timings.
void summarize_usage(const Program& program, SimResult& r);

}  // namespace autoddl::sim
