// plan_to_json: see iteration_plan_json.hpp. Names, not ids, so the file reads beside the graph
// JSON and the scheme JSON of the same run.
#include "autoddl/costmodel/iteration_plan_json.hpp"

#include <string>

namespace autoddl::costmodel {
namespace {

nlohmann::json steps_json(const std::vector<BoxingStep>& steps) {
  nlohmann::json a = nlohmann::json::array();
  for (const BoxingStep& s : steps) {
    a.push_back({{"dim", s.dim},
                 {"kind", std::string(collective_info(s.kind).name)},
                 {"bytes", s.bytes},
                 {"wire_bytes", s.wire_bytes}});
  }
  return a;
}

nlohmann::json route_json(const std::vector<NdSbp>& route) {
  nlohmann::json a = nlohmann::json::array();
  for (const NdSbp& s : route) a.push_back(to_string(s));
  return a;
}

// A path: null when nothing moves (same SBP, or another reader is charged).
nlohmann::json path_json(const std::vector<BoxingStep>& steps, const std::vector<NdSbp>& route) {
  if (steps.empty() && route.size() < 2) return nullptr;
  return {{"route", route_json(route)}, {"steps", steps_json(steps)}};
}

const char* role_name(InputRole r) {
  switch (r) {
    case InputRole::activation: return "activation";
    case InputRole::parameter: return "parameter";
    case InputRole::graph_input: return "input";
  }
  return "input";
}

nlohmann::json buckets_json(const Graph& graph, const std::vector<std::vector<PlannedBucket>>& stages) {
  nlohmann::json out = nlohmann::json::array();
  for (const std::vector<PlannedBucket>& stage : stages) {
    nlohmann::json bs = nlohmann::json::array();
    for (const PlannedBucket& b : stage) {
      nlohmann::json grads = nlohmann::json::array();
      for (const PlannedGradient& g : b.grads) {
        grads.push_back({{"tensor", graph.tensors[g.tensor].name},
                         {"op", graph.ops[g.op].name},
                         {"bytes", g.bytes},
                         {"route", route_json(g.route)}});
      }
      bs.push_back({{"steps", steps_json(b.steps)}, {"grads", grads}});
    }
    out.push_back(bs);
  }
  return out;
}

}  // namespace

nlohmann::json plan_to_json(const Graph& graph, const Scheme& scheme, const IterationPlan& plan) {
  nlohmann::json ops = nlohmann::json::array();
  for (size_t i = 0; i < plan.ops.size(); ++i) {
    const PlannedOp& p = plan.ops[i];
    const Op& op = graph.ops[i];
    nlohmann::json inputs = nlohmann::json::array();
    for (size_t k = 0; k < p.inputs.size(); ++k) {
      const PlannedInput& in = p.inputs[k];
      nlohmann::json j = {{"tensor", graph.tensors[op.inputs[k]].name},
                          {"role", role_name(in.role)},
                          {"fwd", path_json(in.fwd, in.fwd_route)},
                          {"bwd", path_json(in.bwd, in.bwd_route)}};
      if (in.producer >= 0) j["producer"] = graph.ops[in.producer].name;
      // The forward route again, for the weight gradient (a sequence-parallel input).
      if (!in.bwd_regather.empty()) j["bwd_regather"] = steps_json(in.bwd_regather);
      if (in.cross_stage) j["cross_stage"] = true;
      inputs.push_back(j);
    }
    ops.push_back({{"op", op.name}, {"stage", p.stage}, {"inputs", inputs}});
  }
  return {{"format", "autoddl-plan-1"},
          {"scheme", scheme.name},
          {"mesh", plan.mesh.shape()},
          {"sbp_mesh", plan.sbp_mesh.shape()},
          {"pipeline_dim", plan.pipeline_dim},
          {"stages", plan.stages},
          {"micro_batches", plan.micro_batches},
          {"ops", ops},
          {"buckets", buckets_json(graph, plan.buckets)},
          {"param_gathers", buckets_json(graph, plan.param_gathers)}};
}

}  // namespace autoddl::costmodel
