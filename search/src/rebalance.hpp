// A second stage partition from the scheme the staged descent found. The first partition came
// from per-layer costs of a reference descent on single-stage tables; the scheme found may
// choose differently per layer (sequence parallelism in some layers, the LM head split another
// way), so its own per-layer costs are partitioned again by the same min-max DP, plain CD runs
// from it on tables staged that way, and the result replaces the scheme when evaluate() rates it
// faster (feasible first).
#pragma once
#include "autoddl/costmodel/cost_report.hpp"
#include "autoddl/costmodel/scheme.hpp"
#include "autoddl/search/cost_tables.hpp"

namespace autoddl::search {

// `staged`: the options of the tables the scheme was found on. Returns true when it replaced
// `scheme` and `report`.
bool rebalance_stages(const costmodel::Graph& g, const costmodel::ClusterSpec& c, const TableOptions& staged,
                      costmodel::Scheme& scheme, costmodel::CostReport& report, double time_limit_s);

}  // namespace autoddl::search
