// Lowers (graph, cluster, scheme) to each rank's program for the GPU validation runner
// (docs/validation-plan.md): per micro-batch, forward then backward steps per op (GEMMs on the
// local shapes the op's signature gives, memory-bound kernels with the model's local bytes,
// NCCL collectives for every boxing step, pipeline send/recv), then the gradient-sync
// buckets and the optimizer step, each with the seconds the cost model predicts for it.
// It replays the IterationPlan that costmodel::evaluate records (as the simulator's lowering
// does), so every step is one the model charged, and a rank's predicted steps add up to the
// CostReport's numbers; tests pin that. Each stage's units run in its pipeline schedule's order.
// The runner's memory-bound steps are copies, so norms, the loss and the optimizer step are
// priced at the streaming rate here (not at the GPU's measured rates for the real kernels).
#pragma once
#include "autoddl/calib/validation_format.hpp"
#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/cost_report.hpp"
#include "autoddl/costmodel/graph.hpp"
#include "autoddl/costmodel/scheme.hpp"

namespace autoddl::calib {

struct PlanBuild {
  ValidationPlan plan;
  costmodel::CostReport report;  // evaluate()'s report the plan's predictions come from
};

// Throws InputError like costmodel::evaluate for a scheme that does not fit the graph or mesh.
PlanBuild make_validation_plan(const costmodel::Graph& graph, const costmodel::ClusterSpec& cluster,
                               const costmodel::Scheme& scheme);

}  // namespace autoddl::calib
