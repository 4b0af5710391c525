// The IterationPlan as JSON (docs/scheme-json.md, "Plan JSON"): per op and input the forward
// and backward boxing (the nd-SBPs each path visits and its collective steps with their
// nccl-tests sizes), and the gradient-sync buckets with the gradients in each. A replay outside
// this process (calib/cpu/sbp_step.py runs it with real tensors) walks the same routes and
// checks that its collectives moved the bytes written here.
#pragma once
#include <nlohmann/json.hpp>

#include "autoddl/costmodel/graph.hpp"
#include "autoddl/costmodel/iteration_plan.hpp"
#include "autoddl/costmodel/scheme.hpp"

namespace autoddl::costmodel {

// `plan` must come from evaluate(graph, cluster, scheme, &plan).
nlohmann::json plan_to_json(const Graph& graph, const Scheme& scheme, const IterationPlan& plan);

}  // namespace autoddl::costmodel
