// evaluate()'s phases run one by one on a scheme, for tests that look inside them.
#pragma once
#include <memory>
#include <vector>

#include "autoddl/costmodel/boxing_plan.hpp"
#include "autoddl/costmodel/grad_buckets.hpp"
#include "autoddl/costmodel/op_compute.hpp"

struct RunPhases {
  autoddl::costmodel::EvalFrame frame;
  std::vector<autoddl::costmodel::OpCompute> compute;
  std::unique_ptr<autoddl::costmodel::BoxingCache> cache;
  autoddl::costmodel::BoxingPlan boxing;
  autoddl::costmodel::GradSyncPhase sync;

  RunPhases(const autoddl::costmodel::Graph& g, const autoddl::costmodel::ClusterSpec& c,
            const autoddl::costmodel::Scheme& s)
      : frame(autoddl::costmodel::make_eval_frame(g, c, s)),
        compute(autoddl::costmodel::compute_phase(c.gpu, g, s, frame.op_stage, nullptr)),
        cache(std::make_unique<autoddl::costmodel::BoxingCache>(frame.split.sbp_mesh)),
        boxing(autoddl::costmodel::plan_boxing(g, s, frame, compute, *cache, nullptr)),
        sync(autoddl::costmodel::sync_gradients(g, s, frame, compute, boxing, nullptr)) {}
};
