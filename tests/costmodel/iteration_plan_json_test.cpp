// The plan JSON (docs/scheme-json.md, "Plan JSON") that the CPU executor replays: every boxing
// route starts at the SBP the path converts from and ends at the one it converts to, changes
// one mesh dim per step, and has exactly one collective step per non-local transition, so a
// replay that walks the route runs the collectives that were priced, no more and no fewer.
#include <catch2/catch.hpp>

#include <string>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/iteration_plan_json.hpp"
#include "autoddl/costmodel/zoo.hpp"

using namespace autoddl::costmodel;

namespace {
// Transitions of one mesh dim that need a collective (boxing.hpp's 1-D rule): S→B, P→B, P→S,
// S(i)→S(j); B→S, B→P and S→P are local.
bool collective(Sbp from, Sbp to) {
  if (from == to) return false;
  return from.is_partial() || (from.is_split() && !to.is_partial());
}

void check_route(const nlohmann::json& path, int nd, const std::string& from, const std::string& to) {
  if (path.is_null()) return;
  const nlohmann::json& route = path["route"];
  REQUIRE(route.size() >= 2);
  if (!from.empty()) CHECK(route.front().get<std::string>() == from);
  if (!to.empty()) CHECK(route.back().get<std::string>() == to);
  size_t collectives = 0;
  for (size_t i = 0; i + 1 < route.size(); ++i) {
    NdSbp a, b;
    REQUIRE(parse_nd_sbp(route[i].get<std::string>(), nd, a));
    REQUIRE(parse_nd_sbp(route[i + 1].get<std::string>(), nd, b));
    int changed = 0;
    for (int d = 0; d < nd; ++d) {
      if (a.dims[d] == b.dims[d]) continue;
      ++changed;
      if (collective(a.dims[d], b.dims[d])) {
        REQUIRE(collectives < path["steps"].size());
        CHECK(path["steps"][collectives]["dim"].get<int>() == d);
        ++collectives;
      }
    }
    CHECK(changed == 1);
  }
  CHECK(collectives == path["steps"].size());
}
}  // namespace

TEST_CASE("plan JSON routes walk from the source SBP to the target one collective step at a time",
          "[costmodel][plan]") {
  const ClusterSpec c = resolve_cluster("autosync-b", 1);
  const Graph gpt = build_zoo_model("gpt", parse_knob_list("layers=2,hidden=64,heads=4,seq=16,batch=8,vocab=128"));
  for (const std::string spec : {"dp", "megatron:tp=2,pp=1,dp=2", "megatron:tp=2,pp=1,dp=2,sp=1"}) {
    INFO(spec);
    const Scheme s = make_scheme(spec, gpt, c, {});
    IterationPlan p;
    evaluate(gpt, c, s, &p);
    const nlohmann::json j = plan_to_json(gpt, s, p);
    CHECK(j["format"] == "autoddl-plan-1");
    const int nd = static_cast<int>(j["sbp_mesh"].size());
    REQUIRE(j["ops"].size() == gpt.ops.size());
    int paths = 0;
    for (size_t i = 0; i < gpt.ops.size(); ++i) {
      const Op& op = gpt.ops[i];
      const OpSignature& sig = s.op_sigs[i];
      CHECK(j["ops"][i]["op"] == op.name);
      for (size_t k = 0; k < op.inputs.size(); ++k) {
        const nlohmann::json& in = j["ops"][i]["inputs"][k];
        const Tensor& t = gpt.tensors[op.inputs[k]];
        if (t.role == TensorRole::parameter) {
          check_route(in["fwd"], nd, to_string(s.param_storage[op.inputs[k]]), to_string(sig.in[k]));
        } else if (t.producer >= 0) {
          const OpSignature& psig = s.op_sigs[t.producer];
          check_route(in["fwd"], nd, to_string(psig.out[0]), to_string(sig.in[k]));
          check_route(in["bwd"], nd, to_string(sig.in_grad[k]), to_string(psig.out_grad[0]));
        }
        paths += !in["fwd"].is_null() + !in["bwd"].is_null();
      }
    }
    if (spec != "dp") CHECK(paths > 0);
    for (const nlohmann::json& bucket : j["buckets"][0]) {
      REQUIRE(!bucket["grads"].empty());
      for (const nlohmann::json& g : bucket["grads"]) {
        nlohmann::json path = {{"route", g["route"]}, {"steps", bucket["steps"]}};
        check_route(path, nd, "", "");
      }
    }
  }
}
