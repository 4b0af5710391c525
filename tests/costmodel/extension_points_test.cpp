// The extension-point recipes of docs/architecture.md tried from test code alone: a toy op kind
// (its whole op-table row registered with register_op_kind, read from graph JSON by name) and a
// toy collective algorithm (a row of the algorithm table registered with
// register_collective_algo), then a graph using both is costed by evaluate().
#include <catch2/catch.hpp>

#include <cmath>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/collective.hpp"
#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/graph_json.hpp"
#include "autoddl/costmodel/mesh.hpp"
#include "autoddl/costmodel/op_registry.hpp"

using namespace autoddl::costmodel;

namespace {

// ---- the toy op kind: y = toy(x), elementwise, with a settable FLOP count per element ----
double g_toy_flops_per_element = 1e4;

std::vector<Shape> toy_shapes(const Graph& g, const Op& op) { return {g.tensors[op.inputs[0]].shape}; }

OpWork toy_work(const Graph& g, const Op& op) {
  const Tensor& x = g.tensors[op.inputs[0]];
  OpWork w;
  w.fwd_flops = g_toy_flops_per_element * static_cast<double>(x.elements());
  w.bwd_flops = w.fwd_flops;
  w.fwd_bytes = 2.0 * static_cast<double>(x.bytes());
  w.bwd_bytes = 3.0 * static_cast<double>(x.bytes());
  return w;
}

void toy_sbp(const Graph& g, const Op& op, std::vector<Signature1D>& out) {
  const int rank = static_cast<int>(g.tensors[op.inputs[0]].shape.size());
  for (int a = 0; a < rank; ++a) {
    Signature1D s;
    s.in[0] = Sbp::split(a);
    s.out[0] = Sbp::split(a);
    out.push_back(s);
  }
}

// Registered for one test case, removed after it: other tests in the process see the table as built.
struct ToyKind {
  OpKind kind = register_op_kind({.name = "toy_scale", .min_inputs = 1, .max_inputs = 1, .infer_shapes = toy_shapes,
                                  .work = toy_work, .sbp_rules = toy_sbp});
  ~ToyKind() { unregister_op_kind(kind); }
};

// ---- the toy collective algorithm: all-reduce at a settable fraction of the ring's time ----
double g_toy_factor = 0.5;

double toy_tier_time_s(CollectiveKind kind, int p, double bytes, const LinkTier& tier) {
  if (kind != CollectiveKind::all_reduce) return -1;
  return g_toy_factor * ring_time_s(kind, p, bytes, tier);
}

// Registered with a factor for one scope, removed after it.
struct ToyAlgo {
  explicit ToyAlgo(double factor) { g_toy_factor = factor; }
  CollectiveAlgo algo = register_collective_algo({.name = "toy_halving", .tier_time_s = toy_tier_time_s});
  ~ToyAlgo() { unregister_collective_algo(algo); }
};

// images -> fc1 (matmul) -> toy_scale -> fc2 (matmul) -> loss: a graph JSON naming the toy kind.
Graph toy_graph() {
  const nlohmann::json j = nlohmann::json::parse(R"({
    "name": "toy_net", "batch": 64,
    "tensors": [
      {"name": "images", "shape": [64, 1024], "dtype": "fp32", "role": "input"},
      {"name": "labels", "shape": [64], "dtype": "int64", "role": "input"},
      {"name": "w1", "shape": [1024, 1024], "dtype": "fp32", "role": "parameter"},
      {"name": "w2", "shape": [1024, 16], "dtype": "fp32", "role": "parameter"},
      {"name": "h", "shape": [64, 1024], "dtype": "fp32", "role": "activation"},
      {"name": "t", "shape": [64, 1024], "dtype": "fp32", "role": "activation"},
      {"name": "logits", "shape": [64, 16], "dtype": "fp32", "role": "activation"},
      {"name": "loss", "shape": [], "dtype": "fp32", "role": "activation"}],
    "ops": [
      {"name": "fc1", "kind": "matmul", "inputs": ["images", "w1"], "outputs": ["h"]},
      {"name": "toy", "kind": "toy_scale", "inputs": ["h"], "outputs": ["t"]},
      {"name": "fc2", "kind": "matmul", "inputs": ["t", "w2"], "outputs": ["logits"]},
      {"name": "loss", "kind": "cross_entropy", "inputs": ["logits", "labels"], "outputs": ["loss"]}]})");
  return graph_from_json(j, "toy_net.json");
}

const OpCostRow& row_of(const CostReport& r, const std::string& op) {
  for (const OpCostRow& o : r.per_op) {
    if (o.op == op) return o;
  }
  FAIL("no per-op row for " << op);
  return r.per_op.front();
}

}  // namespace

TEST_CASE("a toy op kind registered from test code is read by name and priced by its own FLOPs",
          "[costmodel][extension]") {
  const ToyKind toy;
  const OpKind kind = toy.kind;
  CHECK(static_cast<int>(kind) >= kBuiltinOpKindCount);
  CHECK(op_kind_info(kind).name == "toy_scale");
  REQUIRE(find_op_kind("toy_scale") != nullptr);
  CHECK(find_op_kind("toy_scale")->kind == kind);

  const ClusterSpec c = resolve_cluster("dgx1-v100", 1);
  g_toy_flops_per_element = 1e4;
  const Graph g1 = toy_graph();
  CHECK(g1.ops[1].kind == kind);
  CHECK(graph_to_json(g1)["ops"][1]["kind"] == "toy_scale");  // written back by name
  g_toy_flops_per_element = 3e4;
  const Graph g3 = toy_graph();
  g_toy_flops_per_element = 1e4;

  const CostReport r1 = evaluate(g1, c, make_scheme("dp", g1, c, {}));
  const CostReport r3 = evaluate(g3, c, make_scheme("dp", g3, c, {}));
  REQUIRE(std::isfinite(r1.iteration_s));
  REQUIRE(r1.feasible);
  // dp splits the batch over the 8 GPUs; the toy is compute-bound, so its forward plus backward
  // grow by exactly the added FLOPs at the GPU's fp32 peak.
  const double elements_per_gpu = 64.0 * 1024 / 8;
  const double added_s = 2 * (3e4 - 1e4) * elements_per_gpu / c.gpu.peak_flops(DType::fp32);
  CHECK(row_of(r3, "toy").compute_s - row_of(r1, "toy").compute_s == Approx(added_s).epsilon(1e-9));
  CHECK(row_of(r3, "fc1").compute_s == row_of(r1, "fc1").compute_s);
  CHECK(r3.compute_s - r1.compute_s == Approx(added_s).epsilon(1e-9));
  // The toy keeps the batch split: no boxing around it.
  CHECK(row_of(r1, "toy").boxing_s == 0);
}

TEST_CASE("a toy collective algorithm registered from test code prices the gradient all-reduce",
          "[costmodel][extension]") {
  const ToyKind toy_op;
  const ClusterSpec c = resolve_cluster("dgx1-v100", 1);  // no nccl block, no calibration: α-β tiers
  const Graph g = toy_graph();
  const Scheme dp = make_scheme("dp", g, c, {});
  const CostReport ring = evaluate(g, c, dp);
  REQUIRE(ring.grad_sync_s > 0);
  for (double factor : {0.5, 0.25}) {
    const ToyAlgo registered(factor);
    const CollectiveAlgo algo = registered.algo;
    CHECK(collective_algo_name(algo) == "toy_halving");
    const DeviceMesh mesh = make_mesh(c, dp.mesh_shape);
    const CollectiveEstimate e = mesh.collective(0, CollectiveKind::all_reduce, 1e6);
    CHECK(e.algo == algo);
    CHECK(e.time_s == Approx(factor * ring_time_s(CollectiveKind::all_reduce, 8, 1e6, mesh.dims[0].tier)));
    const CostReport toy = evaluate(g, c, dp);
    REQUIRE(std::isfinite(toy.iteration_s));
    CHECK(toy.grad_sync_s == Approx(factor * ring.grad_sync_s));
    CHECK(toy.compute_s == ring.compute_s);
  }
  // Removed again: the ring prices it, as before the toy.
  CHECK(make_mesh(c, dp.mesh_shape).collective(0, CollectiveKind::all_reduce, 1e6).algo == CollectiveAlgo::ring);
  CHECK(evaluate(g, c, dp).grad_sync_s == ring.grad_sync_s);
}
