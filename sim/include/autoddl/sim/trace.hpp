// A simulated iteration as a Chrome trace (traces/chrome_trace.hpp): one process per node,
// one thread per (GPU, stream), one complete event per task and stream it occupied (a
// collective appears once on each participant's stream), collectives named by kind and size.
#pragma once
#include <string>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/sim/program.hpp"
#include "autoddl/sim/simulate.hpp"
#include "autoddl/traces/chrome_trace.hpp"

namespace autoddl::sim {

traces::ChromeTrace to_chrome_trace(const Program& program, const SimResult& result,
                                    const costmodel::ClusterSpec& cluster);
void write_trace(const std::string& path, const Program& program, const SimResult& result,
                 const costmodel::ClusterSpec& cluster);

// "64 MiB", "1.5 GiB", "512 B": sizes in binary units, as collectives are named in traces.
std::string format_bytes(double bytes);

}  // namespace autoddl::sim
