// Features of one strategy for the learned rankers (AutoSync §4b): the analytical evaluator's
// terms aggregated as max and sum over PS servers and over all-reduce groups (transmission,
// overhead and local reduction separately, AutoSync's 12-dim vector less the GPU-kernel term it
// leaves at zero), its iteration and its contention terms (analytical.hpp: full-duplex PS
// pipelining, the busiest NIC's PS and PS + all-reduce load), the model's compute,
// variable-size statistics, structure counts and cluster figures, and the main times as
// fractions of the compute (comparable across lists). Nothing comes from the simulator.
#pragma once
#include <string>
#include <vector>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/sync/analytical.hpp"

namespace autoddl::sync {

// Names in the order strategy_features() fills them.
const std::vector<std::string>& feature_names();

std::vector<double> strategy_features(const std::vector<Variable>& vars, const Strategy& s,
                                      const Evaluation& e, const costmodel::ClusterSpec& c);

}  // namespace autoddl::sync
