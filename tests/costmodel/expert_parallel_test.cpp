// Expert parallelism in the megatron scheme (Megatron-Core's --expert-model-parallel-size and
// --expert-tensor-parallel-size): the expert groups re-cut the dp x tp ranks into edp x ep x etp;
// expert weights split over ep (and etp), the dispatch and combine become all-to-alls of the
// token slots, the experts' gradients sync over edp only; and each bad combination is refused
// naming the parameter.
#include <catch2/catch.hpp>
#include <algorithm>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/megatron_layout.hpp"
#include "autoddl/costmodel/mesh.hpp"
#include "autoddl/costmodel/scheme_export.hpp"
#include "autoddl/costmodel/zoo.hpp"
#include "input_error.hpp"
#include "scheme_lookup.hpp"

using namespace autoddl::costmodel;

namespace {
// Mixtral's shape with few layers: 8 experts, top-2, h 4096, expert_ffn 14336.
Graph mixtral(int layers) {
  return build_zoo_model("mixtral-8x7b", parse_knob_list("layers=" + std::to_string(layers) + ",batch=8"));
}

double expert_param_elements(const Graph& g) {
  const std::vector<bool> ep = expert_parameters(g);
  double n = 0;
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    if (ep[t]) n += static_cast<double>(g.tensors[t].elements());
  }
  return n;
}

size_t kind(CollectiveKind k) { return static_cast<size_t>(k); }
}  // namespace

TEST_CASE("ep=8 splits the experts over 8 GPUs and all-to-alls each token slot there and back",
          "[costmodel][moe]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 1);
  const Graph g = mixtral(2);
  const Scheme dp = make_scheme("megatron:tp=1,pp=1,dp=8", g, c, {});
  const Scheme ep = make_scheme("megatron:tp=1,pp=1,dp=8,ep=8", g, c, {});
  CHECK(ep.mesh_shape == std::vector<int>{8});
  const OpSignature& gate = sig_of(g, ep, "layer.0.moe.experts.gate");
  CHECK(gate.in[0].dims[0] == Sbp::split(1));  // slots arrive split by expert
  CHECK(gate.in[1].dims[0] == Sbp::split(0));  // each GPU holds one expert's weight
  CHECK(sig_of(g, ep, "layer.0.moe.dispatch").out[0].dims[0] == Sbp::split(0));
  CHECK(sig_of(g, ep, "layer.0.moe.combine").in[0].dims[0] == Sbp::split(0));

  const CostReport r_dp = evaluate(g, c, dp);
  const CostReport r_ep = evaluate(g, c, ep);
  // Each MoE layer: dispatch and combine forward, their gradients backward = 4 all-to-alls of
  // the GPU's slots (1 sample x 4096 tokens x top-2 x h 4096 x 2 bytes), 7/8 of it leaving.
  const double slots_bytes = 4096.0 * 2 * 4096 * 2;
  CHECK(r_dp.comm.count[kind(CollectiveKind::all_to_all)] == 0);
  CHECK(r_ep.comm.count[kind(CollectiveKind::all_to_all)] == 2 * 4);
  CHECK(r_ep.comm.bytes[kind(CollectiveKind::all_to_all)] == Approx(2 * 4 * slots_bytes * 7 / 8));
  // Expert weights are no longer replicated: 7/8 of their parameters, gradients and optimizer
  // state leave each GPU (18 bytes per parameter: bf16 weight, fp32 gradient, fp32 master
  // weight, Adam's two fp32 moments) and their gradients are not all-reduced.
  const double experts = expert_param_elements(g);
  CHECK(r_dp.param_memory_bytes - r_ep.param_memory_bytes == Approx(experts * 7 / 8 * 18).epsilon(0.01));
  const double ar_dp = r_dp.comm.bytes[kind(CollectiveKind::all_reduce)];
  const double ar_ep = r_ep.comm.bytes[kind(CollectiveKind::all_reduce)];
  CHECK(ar_dp - ar_ep == Approx(2 * 7.0 / 8 * experts * 4).epsilon(0.01));  // ring all-reduce of fp32 grads
  CHECK(r_ep.iteration_s < r_dp.iteration_s);
}

TEST_CASE("the all-to-alls of expert parallelism are reported as exposed communication of their own",
          "[costmodel][moe]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 1);
  const Graph g = mixtral(2);
  const CostReport r_dp = evaluate(g, c, make_scheme("megatron:tp=1,pp=1,dp=8", g, c, {}));
  const CostReport r_ep = evaluate(g, c, make_scheme("megatron:tp=1,pp=1,dp=8,ep=8", g, c, {}));
  CHECK(r_dp.all_to_all_exposed_s == 0);
  // 2 layers x (dispatch, combine) x (forward, backward), each one all-to-all of the GPU's
  // slots on the 8 GPUs of the node, none of it hidden.
  const double slots_bytes = 4096.0 * 2 * 4096 * 2;
  const double one_s = make_mesh(c, {8}).collective(0, CollectiveKind::all_to_all, slots_bytes).time_s;
  CHECK(r_ep.all_to_all_exposed_s == Approx(8 * one_s));
  CHECK(r_ep.all_to_all_exposed_s <= r_ep.fwd_boxing_s + r_ep.bwd_boxing_s);
  CHECK(to_json(r_ep).at("all_to_all_exposed_s").get<double>() == r_ep.all_to_all_exposed_s);
}

TEST_CASE("etp=tp runs each expert tensor-parallel, etp=1 spreads the experts over the tp ranks",
          "[costmodel][moe]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 1);
  const Graph g = mixtral(1);
  // etp = tp (Megatron-Core's default): mesh [dp/ep, ep, tp] = [1, 4, 2] -> 4 x 2.
  const Scheme col = make_scheme("megatron:tp=2,pp=1,dp=4,ep=4,sp=1", g, c, {});
  CHECK(col.mesh_shape == std::vector<int>{4, 2});
  const OpSignature& g1 = sig_of(g, col, "layer.0.moe.experts.gate");
  CHECK(g1.in[1].dims[0] == Sbp::split(0));  // experts over ep
  CHECK(g1.in[1].dims[1] == Sbp::split(2));  // column-parallel over etp
  CHECK(g1.in[0].dims[1] == Sbp::broadcast());  // tokens all-gathered over etp
  const OpSignature& down = sig_of(g, col, "layer.0.moe.experts.down");
  CHECK(down.out[0].dims[1] == Sbp::partial());  // row-parallel
  // reduce-scattered over etp before the all-to-all back, as Megatron-Core does
  CHECK(sig_of(g, col, "layer.0.moe.combine").in[0].dims[1] == Sbp::split(0));
  // etp = 1 with ep = 8 over tp = 2: the expert group spans the tp ranks, mesh [ep/tp, tp].
  const Scheme spread = make_scheme("megatron:tp=2,pp=1,dp=4,ep=8,etp=1,sp=1", g, c, {});
  CHECK(spread.mesh_shape == std::vector<int>{4, 2});
  const OpSignature& g2 = sig_of(g, spread, "layer.0.moe.experts.gate");
  CHECK(g2.in[1].dims[0] == Sbp::split(0));
  CHECK(g2.in[1].dims[1] == Sbp::split(0));  // 8 experts over 4 x 2 ranks, one each
  CHECK(g2.in[0].dims[1] == Sbp::split(1));
  // the dense layers are tensor-parallel in both
  const OpSignature& q = sig_of(g, spread, "layer.0.attn.q");
  CHECK(q.in[1].dims[1] == Sbp::split(1));
  const CostReport r_col = evaluate(g, c, col), r_spread = evaluate(g, c, spread);
  CHECK(r_spread.param_memory_bytes == Approx(r_col.param_memory_bytes).epsilon(0.01));
}

TEST_CASE("megatron ep and etp are refused where Megatron-Core refuses them", "[costmodel][moe][bad-input]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 1);
  const Graph moe = mixtral(1);
  const Graph dense = build_zoo_model("llama", parse_knob_list("layers=1"));
  struct Case {
    const Graph* g;
    const char* spec;
    const char* field;
    const char* reason;
  };
  const Case cases[] = {
      {&dense, "megatron:tp=1,pp=1,dp=8,ep=8", "ep", "llama has no experts (ep needs a Mixture-of-Experts model)"},
      {&dense, "megatron:tp=2,pp=1,dp=4,etp=1", "etp", "llama has no experts (etp needs a Mixture-of-Experts model)"},
      {&moe, "megatron:tp=1,pp=1,dp=8,ep=3", "ep", "3 does not divide the 8 experts of mixtral-8x7b"},
      {&moe, "megatron:tp=4,pp=1,dp=2,ep=2,etp=2,sp=1", "etp", "must be 1 or tp = 4 (got 2)"},
      {&moe, "megatron:tp=2,pp=1,dp=4,ep=8,sp=1", "ep",
       "ep*etp = 16 does not divide dp*tp = 8 (the ranks of a pipeline stage)"},
      {&moe, "megatron:tp=4,pp=1,dp=2,ep=2,etp=1,sp=1", "ep",
       "must be a multiple of tp = 4 with etp=1 (got 2; an expert group inside a tensor-parallel group is not "
       "modelled)"},
      {&moe, "megatron:tp=2,pp=1,dp=4,ep=4", "sp",
       "must be 1 with experts and tp > 1 (Megatron-Core requires sequence parallelism for MoE with tensor "
       "parallelism)"},
      {&moe, "megatron:tp=1,pp=1,dp=8,ep=0", "ep", "must be an integer in [1, 1048576] (got '0')"},
  };
  for (const Case& k : cases) {
    INFO(k.spec);
    auto e = input_error_of([&] { make_scheme(k.spec, *k.g, c, {}); });
    REQUIRE(e);
    CHECK(e->file() == "--scheme");
    CHECK(e->field() == k.field);
    CHECK(e->reason() == k.reason);
  }
}

TEST_CASE("an all-to-all across nodes shares each node's NICs among all its GPUs", "[costmodel][moe][collective]") {
  // Expert parallelism over 16 GPUs on 2 DGX H100: half of each GPU's buffer leaves the node,
  // and all 8 GPUs of the node send theirs at once through its NICs.
  const ClusterSpec c = resolve_cluster("dgx-h100", 2);
  const DeviceMesh m = make_mesh(c, {16});
  const double bytes = 128e6;
  const double nic_s = 8.0 / 16 * bytes * 8 / c.node_nic_bw_bytes_per_s();
  const double alpha_s = 15 * std::max(c.intra.latency_s, c.inter.latency_s);
  CHECK(m.collective(0, CollectiveKind::all_to_all, bytes).time_s == Approx(nic_s + alpha_s));
  // the same exchange inside one node runs on NVLink, several times faster
  const DeviceMesh one = make_mesh(resolve_cluster("dgx-h100", 1), {8});
  CHECK(one.collective(0, CollectiveKind::all_to_all, bytes).time_s < nic_s / 3);
}

TEST_CASE("an expert-parallel megatron scheme is recognised as its layout and exported with its ep flags",
          "[costmodel][moe][export]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 1);
  const Graph g = mixtral(1);
  struct Case {
    const char* spec;
    int ep, etp;
  };
  for (const Case& k : {Case{"megatron:tp=1,pp=1,dp=8,ep=8", 8, 1}, Case{"megatron:tp=1,pp=1,dp=8,ep=4", 4, 1},
                        Case{"megatron:tp=2,pp=1,dp=4,ep=4,sp=1", 4, 2},
                        Case{"megatron:tp=2,pp=1,dp=4,ep=8,etp=1,sp=1", 8, 1},
                        Case{"megatron:tp=2,pp=1,dp=4,ep=2,etp=1,sp=1", 2, 1}}) {
    INFO(k.spec);
    const MegatronMatch m = match_megatron_layout(g, c, make_scheme(k.spec, g, c, {}));
    INFO(m.why_not);
    REQUIRE(m.layout);
    CHECK(m.layout->ep == k.ep);
    CHECK(m.layout->etp == k.etp);
    const std::string lm = find_export_format("megatron-lm").write(g, *m.layout);
    CHECK(lm.find("--expert-model-parallel-size " + std::to_string(k.ep) + "\n") != std::string::npos);
    CHECK(lm.find("--expert-tensor-parallel-size " + std::to_string(k.etp) + "\n") != std::string::npos);
    const std::string bridge = find_export_format("megatron-bridge").write(g, *m.layout);
    CHECK(bridge.find("cfg.model.expert_model_parallel_size = " + std::to_string(k.ep) + "\n") != std::string::npos);
  }
  // a dense layout exports no expert flag
  const Graph dense = build_zoo_model("llama", parse_knob_list("layers=1"));
  const MegatronMatch d = match_megatron_layout(dense, c, make_scheme("megatron:tp=2,pp=1,dp=4", dense, c, {}));
  REQUIRE(d.layout);
  CHECK(find_export_format("megatron-lm").write(dense, *d.layout).find("expert") == std::string::npos);
}

TEST_CASE("pipeline, expert data, expert and tensor parallelism make a 4-D mesh with 3 SBP dims",
          "[costmodel][moe]") {
  const ClusterSpec c = resolve_cluster("dgx-h100", 4);
  const Graph g = mixtral(4);
  const Scheme s = make_scheme("megatron:tp=2,pp=2,dp=8,ep=4,sp=1", g, c, {});
  CHECK(s.mesh_shape == std::vector<int>{2, 2, 4, 2});
  CHECK(s.sbp_shape() == std::vector<int>{2, 4, 2});
  const CostReport r = evaluate(g, c, s);
  CHECK(r.stages == 2);
  CHECK(r.comm.count[kind(CollectiveKind::all_to_all)] > 0);
  // more than a pipeline's dim on top of the SBP dims is refused
  auto e = input_error_of([&] { make_mesh(c, {2, 2, 2, 2, 2}, "mesh"); });
  REQUIRE(e);
  CHECK(e->reason() == "a mesh has 1 to 4 dimensions (at most 3 besides a pipeline's)");
}
