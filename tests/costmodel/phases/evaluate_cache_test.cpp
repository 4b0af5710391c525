// The two shortcuts a walk over thousands of layouts takes (search/src/megatron_grid.cpp):
// memory_fit (the memory phase alone) and evaluate() with boxing tables shared across calls
// (EvalCache). Both must answer exactly what evaluate() answers on its own.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/zoo.hpp"

using namespace autoddl::costmodel;

namespace {

// Dense, pipelined, interleaved, sequence-parallel and expert-parallel layouts of 16 H100, at
// several micro-batch sizes (tensor shapes) on a few meshes.
std::vector<std::string> layouts() {
  return {"megatron:tp=2,pp=2,dp=4,mb=1,sp=1,recompute=none",
          "megatron:tp=2,pp=2,dp=4,mb=2,sp=1,recompute=selective,dist_opt=1,interleave=2,pp_overlap=1",
          "megatron:tp=2,pp=2,dp=4,mb=4,sp=1,recompute=full,dist_opt=1,tp_overlap=1",
          "megatron:tp=8,pp=1,dp=2,mb=8,sp=1,recompute=none",
          "megatron:tp=1,pp=4,dp=4,mb=2,recompute=none",
          "megatron:tp=2,pp=2,dp=4,mb=1,sp=1,recompute=none",  // again, after other meshes
          "dp", "zero3"};
}

}  // namespace

TEST_CASE("memory_fit is evaluate()'s peak memory and feasibility", "[costmodel][phases]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 2);
  const Graph g = build_zoo_model("gpt", {{"layers", "4"}, {"hidden", "4096"}, {"heads", "32"}, {"seq", "4096"},
                                          {"batch", "32"}, {"flash", "1"}});
  const Graph moe = build_zoo_model("mixtral-8x7b", {{"layers", "4"}, {"batch", "32"}});
  int fits = 0, not_fits = 0;
  auto check = [&](const Graph& model, const std::string& spec) {
    INFO(spec);
    const Scheme s = make_scheme(spec, model, c, {});
    const CostReport r = evaluate(model, c, s);
    const MemoryFit m = memory_fit(model, c, s);
    CHECK(m.peak_bytes == r.peak_memory_bytes);
    CHECK(m.fits == r.feasible);
    (m.fits ? fits : not_fits) += 1;
  };
  for (const std::string& spec : layouts()) check(g, spec);
  check(moe, "megatron:tp=1,pp=2,dp=8,mb=1,ep=8,recompute=none");
  check(moe, "megatron:tp=2,pp=1,dp=8,mb=4,ep=8,etp=1,sp=1,recompute=full,dist_opt=1");
  const Graph large = build_zoo_model("llama", {{"size", "3-70b"}, {"batch", "32"}});
  check(large, "dp");  // 70 B parameters' state on every GPU
  check(large, "megatron:tp=8,pp=2,dp=1,mb=1,sp=1,recompute=full,dist_opt=1");
  // Both outcomes were checked: some layouts fit the H100, others (Llama 3 70B data-parallel) do not.
  CHECK(fits > 0);
  CHECK(not_fits > 0);
}

TEST_CASE("evaluate() with boxing tables shared across calls reports what it reports alone",
          "[costmodel][phases]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 2);
  const Graph g = build_zoo_model("gpt", {{"layers", "4"}, {"hidden", "1024"}, {"heads", "16"}, {"seq", "1024"},
                                          {"batch", "32"}});
  EvalCache cache;
  for (const std::string& spec : layouts()) {
    INFO(spec);
    const Scheme s = make_scheme(spec, g, c, {});
    const CostReport alone = evaluate(g, c, s), shared = evaluate(g, c, s, cache);
    CHECK(shared.iteration_s == alone.iteration_s);
    CHECK(shared.fwd_boxing_s == alone.fwd_boxing_s);
    CHECK(shared.bwd_boxing_s == alone.bwd_boxing_s);
    CHECK(shared.grad_sync_s == alone.grad_sync_s);
    CHECK(shared.peak_memory_bytes == alone.peak_memory_bytes);
    REQUIRE(shared.per_op.size() == alone.per_op.size());
    for (size_t i = 0; i < alone.per_op.size(); ++i) CHECK(shared.per_op[i].boxing_s == alone.per_op[i].boxing_s);
  }
}
