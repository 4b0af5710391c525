// The expert schemes (dp, zero1, zero3, owt, megatron) as role assignments lowered to per-op
// signatures, and the dispatch from a --scheme string (see expert_schemes.hpp).
#include "autoddl/costmodel/expert_schemes.hpp"

#include <map>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/mesh.hpp"
#include "autoddl/costmodel/pipeline_layout.hpp"
#include "autoddl/costmodel/recompute_modules.hpp"
#include "autoddl/costmodel/scheme_json.hpp"
#include "autoddl/costmodel/text_integer.hpp"

namespace autoddl::costmodel {

namespace {

// `layers` over `chunks` stages, one layer apart at most, the lighter stages first (they hold
// the embedding): Megatron's even split when `chunks` divides `layers`. (An uneven split is
// refused; its error suggests balanced_pipeline_layout, which weighs the embedding and loss, as
// the Megatron grid does.)
// The `mtp` multi-token-prediction layers go on the last stage, as Megatron-Core places them
// without a layout (multi_token_prediction.py, mtp_on_this_rank: "all MTP layers on the last
// pipeline stage"), outside the even split of the decoder layers.
std::vector<std::string> balanced_layout(size_t layers, int64_t chunks, int mtp) {
  std::vector<std::string> stages(static_cast<size_t>(chunks));
  const size_t light = static_cast<size_t>(chunks) - layers % static_cast<size_t>(chunks);
  for (size_t s = 0; s < stages.size(); ++s) {
    stages[s] = std::string(layers / static_cast<size_t>(chunks) + (s < light ? 0 : 1), 't');
  }
  stages.front().insert(0, "E");
  stages.back() += std::string(static_cast<size_t>(mtp), 'm') + "L";
  return stages;
}

// The layout an uneven split's error suggests: balanced by work, else by layer count.
std::string suggested_layout(const Graph& g, size_t layers, int64_t chunks, int mtp) {
  const std::vector<std::string> by_work = balanced_pipeline_layout(g, chunks);
  return pipeline_layout_text(by_work.empty() ? balanced_layout(layers, chunks, mtp) : by_work);
}

[[noreturn]] void fail(const std::string& field, const std::string& why) {
  throw InputError("--scheme", field, why);
}

std::vector<int> mesh_or_default(const ClusterSpec& c, const std::vector<int>& mesh_shape) {
  if (!mesh_shape.empty()) return mesh_shape;
  return default_mesh(c).shape();
}

// Parameters stored as they are first used (tensor dims) and broadcast on data dims.
std::vector<NdSbp> storage_from_use(const Graph& g, const std::vector<OpSignature>& sigs, int nd) {
  std::vector<NdSbp> st(g.tensors.size(), NdSbp::all(Sbp::broadcast(), nd));
  std::vector<bool> seen(g.tensors.size(), false);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      int t = op.inputs[k];
      if (g.tensors[t].role != TensorRole::parameter || seen[t]) continue;
      seen[t] = true;
      st[t] = sigs[i].in[k];
      for (int d = 0; d < nd; ++d) {
        if (st[t].dims[d].is_partial()) st[t].dims[d] = Sbp::broadcast();
      }
    }
  }
  return st;
}

// ZeRO-3 / FSDP storage: on each data dim (and context dim, where parameters are replicated as
// on data dims: Megatron-FSDP shards over the data-and-context-parallel group), split a parameter
// on its first axis that still divides (after the other dims' splits); tiny parameters that
// divide nowhere stay replicated. `replicate_dim` (HSDP's replica dim, -1: none) is not sharded.
void shard_on_data_dims(const Graph& g, const std::vector<int>& shape, const std::vector<DimRole>& roles,
                        std::vector<NdSbp>& st, int replicate_dim = -1) {
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    const Tensor& x = g.tensors[t];
    if (x.role != TensorRole::parameter) continue;
    for (size_t d = 0; d < roles.size(); ++d) {
      const bool replica_dim = roles[d] == DimRole::data || roles[d] == DimRole::context;
      if (!replica_dim || static_cast<int>(d) == replicate_dim || !st[t].dims[d].is_broadcast()) continue;
      for (int a = 0; a < static_cast<int>(x.shape.size()); ++a) {
        NdSbp trial = st[t];
        trial.dims[d] = Sbp::split(a);
        if (divides(trial, shape.data(), x.shape)) {
          st[t] = trial;
          break;
        }
      }
    }
  }
}

Scheme data_parallel(const std::string& name, const Graph& g, const ClusterSpec& c,
                     const std::vector<int>& mesh_shape) {
  Scheme s;
  s.name = name;
  s.mesh_shape = mesh_or_default(c, mesh_shape);
  make_mesh(c, s.mesh_shape);
  std::vector<DimRole> roles(s.mesh_shape.size(), DimRole::data);
  int devices = 1;
  for (int x : s.mesh_shape) devices *= x;
  if (g.batch % devices != 0) {
    fail(name, "the batch " + std::to_string(g.batch) + " does not split over " +
                   std::to_string(devices) + " data-parallel devices");
  }
  s.op_sigs = lower_roles(g, s.mesh_shape, roles, 1, {});
  s.param_storage = storage_from_use(g, s.op_sigs, static_cast<int>(s.mesh_shape.size()));
  if (name == "zero1") s.shard_optimizer = true;
  if (name == "zero3") {
    shard_on_data_dims(g, s.mesh_shape, roles, s.param_storage);
    s.regather_in_backward = true;
  }
  return s;
}

Scheme one_weird_trick(const Graph& g, const ClusterSpec& c, const std::vector<int>& mesh_shape) {
  Scheme s;
  s.name = "owt";
  s.mesh_shape = mesh_or_default(c, mesh_shape);
  make_mesh(c, s.mesh_shape);
  std::vector<DimRole> roles(s.mesh_shape.size(), DimRole::tensor);
  LoweringOptions opt;
  opt.conv_data_parallel = true;
  s.op_sigs = lower_roles(g, s.mesh_shape, roles, 1, opt);
  s.param_storage = storage_from_use(g, s.op_sigs, static_cast<int>(s.mesh_shape.size()));
  return s;
}

std::map<std::string, std::string> parse_params(const std::string& text) {
  std::map<std::string, std::string> kv;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t eq = item.find('=');
    if (item.empty() || eq == std::string::npos || eq == 0) {
      fail("megatron", "expected key=value pairs like tp=8,pp=1,dp=2 (got '" + item + "')");
    }
    kv[item.substr(0, eq)] = item.substr(eq + 1);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return kv;
}

// The integer parameter `key` (default `dflt`), which must lie in [1, hi]: parsed whole, so a
// value past 32 bits is refused rather than cut ("tp=4294967304" is not tp=8).
int64_t integer_param(const std::map<std::string, std::string>& kv, const std::string& key, int64_t dflt, int64_t hi) {
  auto it = kv.find(key);
  if (it == kv.end()) return dflt;
  const std::optional<int64_t> v = integer_in(it->second, 1, hi);
  if (!v) fail(key, integer_range_reason(it->second, 1, hi));
  return *v;
}

// A megatron option that is 0 or 1 (default `dflt`), as written.
std::string flag01(const std::map<std::string, std::string>& kv, const std::string& key, const std::string& dflt) {
  auto it = kv.find(key);
  const std::string v = it == kv.end() ? dflt : it->second;
  if (v != "0" && v != "1") fail(key, "must be 0 or 1 (got '" + v + "')");
  return v;
}

// Megatron-Core's expert parallelism: --expert-model-parallel-size (ep) and
// --expert-tensor-parallel-size (etp; Megatron-Core's default is tp). The expert groups re-cut
// the dp x tp ranks of a stage into edp x ep x etp.
struct ExpertGroups {
  bool moe = false;  // the graph has experts
  int ep = 1, etp = 1;
};

ExpertGroups expert_groups(const std::map<std::string, std::string>& kv, const Graph& g, int tp, int dp) {
  ExpertGroups eg;
  eg.ep = static_cast<int>(integer_param(kv, "ep", 1, ClusterSpec::kMaxGpus));
  eg.etp = static_cast<int>(integer_param(kv, "etp", tp, ClusterSpec::kMaxGpus));
  const int64_t experts = routed_experts(g);
  if (experts == 0) {
    if (kv.count("ep") && eg.ep > 1) fail("ep", g.name + " has no experts (ep needs a Mixture-of-Experts model)");
    if (kv.count("etp")) fail("etp", g.name + " has no experts (etp needs a Mixture-of-Experts model)");
    eg.ep = 1;
    eg.etp = tp;
    return eg;
  }
  eg.moe = true;
  if (experts % eg.ep != 0) {
    fail("ep", std::to_string(eg.ep) + " does not divide the " + std::to_string(experts) + " experts of " + g.name);
  }
  if (eg.etp != tp && eg.etp != 1) {
    fail("etp", "must be 1 or tp = " + std::to_string(tp) + " (got " + std::to_string(eg.etp) + ")");
  }
  const int64_t expert_ranks = int64_t{dp} * tp;
  if (expert_ranks % (int64_t{eg.ep} * eg.etp) != 0) {
    fail("ep", "ep*etp = " + std::to_string(int64_t{eg.ep} * eg.etp) + " does not divide dp*tp = " +
                   std::to_string(expert_ranks) + " (the ranks of a pipeline stage)");
  }
  if (eg.etp == 1 && tp > 1 && eg.ep % tp != 0) {
    fail("ep", "must be a multiple of tp = " + std::to_string(tp) + " with etp=1 (got " + std::to_string(eg.ep) +
                   "; an expert group inside a tensor-parallel group is not modelled)");
  }
  return eg;
}

// Megatron-Core's context parallelism (--context-parallel-size cp, --cp-comm-type): the checks
// Megatron-Core makes, with the same reasons. Returns whether the KV exchange runs as the p2p
// ring (the default) that overlaps it with attention (Scheme::overlap_cp_comm).
bool context_parallel_checks(const std::map<std::string, std::string>& kv, const Graph& g, int cp, int tp, bool moe) {
  std::string type = kv.count("cp_comm_type") ? kv.at("cp_comm_type") : "p2p";
  if (type == "allgather") type = "all_gather";  // Megatron-LM's --help spelling
  if (type != "p2p" && type != "all_gather") {
    fail("cp_comm_type", type == "a2a" || type == "a2a+p2p"
                             ? type + ": the all-to-all (Ulysses) exchange is not modelled yet; p2p or all_gather"
                             : "must be p2p or all_gather (got '" + type + "')");
  }
  if (cp == 1) {
    if (kv.count("cp_comm_type")) fail("cp_comm_type", "needs cp > 1");
    return false;
  }
  if (moe) fail("cp", "context parallelism with experts is not modelled yet (issue 30)");
  const Op* attention = fused_attention(g);
  if (!attention) {
    fail("cp", g.name + " has no fused attention op: Megatron-Core runs context parallelism inside Transformer "
                        "Engine's fused attention (a zoo model's flash=1)");
  }
  // Each rank holds 2 of the 2·cp sequence chunks of a causal model (load balancing), and with
  // sequence parallelism its tokens split again over tp.
  const int64_t seq = g.tensors[attention->inputs[0]].shape[2];
  const int64_t chunks = int64_t{cp} * (attention->attrs.causal ? 2 : 1);
  if (seq % chunks != 0) {
    fail("cp", "the sequence " + std::to_string(seq) + " does not split into " + std::to_string(chunks) +
                   (attention->attrs.causal ? " chunks (2*cp: causal load balancing gives each rank two)" : " chunks"));
  }
  if (kv.count("sp") && kv.at("sp") == "1" && (seq / cp) % tp != 0) {
    fail("cp", "the sequence " + std::to_string(seq) + " over cp = " + std::to_string(cp) +
                   " does not split over tp = " + std::to_string(tp) + " (sequence parallelism)");
  }
  return type == "p2p";
}

Scheme megatron(const std::string& params, const Graph& g, const ClusterSpec& c,
                const std::vector<int>& mesh_shape) {
  auto kv = parse_params(params);
  for (const auto& [k, v] : kv) {
    static const char* known[] = {"tp", "pp", "dp", "mb", "interleave", "sp", "recompute", "schedule", "sg", "dist_opt", "tp_overlap", "pp_overlap", "grad_reduce_bf16", "param_overlap", "ep", "etp", "layout", "recompute_modules", "cp", "cp_comm_type", "fsdp", "hsdp"};
    bool ok = false;
    for (const char* n : known) ok = ok || k == n;
    if (!ok) {
      fail(k, "unknown megatron parameter (known: tp, pp, dp, mb, interleave, sp, recompute, schedule, sg, dist_opt, tp_overlap, pp_overlap, grad_reduce_bf16, param_overlap, ep, etp, layout, recompute_modules, cp, cp_comm_type, fsdp, hsdp)");
    }
  }
  // No mesh dim, and no virtual-stage count, exceeds the largest cluster's GPUs.
  constexpr int64_t kMaxDim = ClusterSpec::kMaxGpus;
  const int tp = static_cast<int>(integer_param(kv, "tp", 1, kMaxDim));
  const int pp = static_cast<int>(integer_param(kv, "pp", 1, kMaxDim));
  const int dp = static_cast<int>(integer_param(kv, "dp", 1, kMaxDim));
  const int cp = static_cast<int>(integer_param(kv, "cp", 1, kMaxDim));
  // layout=TEXT (Megatron-Core's --pipeline-model-parallel-layout) names each virtual stage's
  // layers; its stage count is pp x interleave (interleave may be left out).
  std::vector<std::string> layout;
  if (kv.count("layout")) {
    if (pp < 2) fail("layout", "needs pp > 1");
    layout = parse_pipeline_layout(kv["layout"]);
    if (layout.size() % pp != 0) {
      fail("layout", "has " + std::to_string(layout.size()) + " stages, not a multiple of pp = " + std::to_string(pp));
    }
    if (kv.count("interleave") && integer_param(kv, "interleave", 1, kMaxDim) * pp != static_cast<int64_t>(layout.size())) {
      fail("layout", "has " + std::to_string(layout.size()) + " stages but pp*interleave = " +
                         std::to_string(integer_param(kv, "interleave", 1, kMaxDim) * pp));
    }
  }
  const int v = layout.empty() ? static_cast<int>(integer_param(kv, "interleave", 1, kMaxDim))
                               : static_cast<int>(layout.size() / pp);
  const int64_t devices = static_cast<int64_t>(tp) * pp * dp * cp;
  if (devices != c.total_gpus()) {
    fail("megatron", std::string(cp > 1 ? "tp*pp*dp*cp = " : "tp*pp*dp = ") + std::to_string(devices) + " but " + c.name + " has " +
                         std::to_string(c.total_gpus()) + " GPUs (" + std::to_string(c.nodes) + " nodes x " +
                         std::to_string(c.gpus_per_node) + ")");
  }
  if (g.batch % dp != 0) fail("dp", "the batch " + std::to_string(g.batch) + " does not split over dp = " + std::to_string(dp));
  const ExpertGroups eg = expert_groups(kv, g, tp, dp);
  const bool cp_ring = context_parallel_checks(kv, g, cp, tp, eg.moe);
  const int64_t mb = integer_param(kv, "mb", pp > 1 ? 1 : g.batch / dp, g.batch);
  if (g.batch % (dp * mb) != 0) {
    fail("mb", "the batch " + std::to_string(g.batch) + " is not a multiple of dp*mb = " + std::to_string(dp * mb));
  }
  Scheme s;
  s.name = "megatron:" + params;
  s.micro_batches = static_cast<int>(g.batch / (dp * mb));
  const std::string sp = flag01(kv, "sp", "0");
  // Megatron-LM scatters pipeline sends over the tensor-parallel ranks and all-gathers them on
  // NVLink unless --no-scatter-gather-tensors-in-pipeline; sg=0 turns it off here.
  const std::string sg = flag01(kv, "sg", "1");
  s.scatter_gather_sends = sg == "1";
  // --use-distributed-optimizer: optimizer state and fp32 master weights sharded over dp,
  // gradients reduce-scattered and parameters all-gathered (ZeRO-1, Scheme::shard_optimizer).
  // fsdp=1: Megatron-FSDP (--use-megatron-fsdp --data-parallel-sharding-strategy
  // optim_grads_params, which Megatron-LM's user guide runs with --use-distributed-optimizer):
  // parameters, gradients and optimizer state sharded over the data- and context-parallel ranks,
  // each layer's parameters gathered before its forward and again before its backward, prefetched
  // (Scheme::fsdp).
  const std::string fsdp = flag01(kv, "fsdp", "0");
  if (fsdp == "1") {
    if (eg.moe) fail("fsdp", "Megatron-FSDP with experts is not modelled yet (issue 30)");
    if (int64_t{dp} * cp < 2) fail("fsdp", "needs dp*cp > 1 (the ranks it shards over)");
    if (kv.count("dist_opt") && kv.at("dist_opt") != "1") {
      fail("dist_opt", "must be 1 with fsdp=1 (Megatron-FSDP runs with --use-distributed-optimizer)");
    }
    if (kv.count("param_overlap") && kv.at("param_overlap") == "1") {
      fail("param_overlap", "does not apply with fsdp=1: parameters stay sharded after the step and each layer's "
                            "gather is prefetched under the previous layer (no post-step all-gather to overlap)");
    }
  }
  // hsdp=R: hybrid sharding (Megatron-FSDP's --num-distributed-optimizer-instances R with
  // --outer-dp-sharding-strategy no_shard; torchtitan's data_parallel_replicate_degree R): the
  // data-parallel ranks cut into R replicas of a shard group of dp/R consecutive ranks (inside a
  // node or an NVLink domain when dp/R·cp·tp fits there), parameters, gradients and optimizer
  // state sharded within the group and replicated across, gradients reduce-scattered within it
  // and all-reduced across.
  const int hsdp = static_cast<int>(integer_param(kv, "hsdp", 1, kMaxDim));
  if (kv.count("hsdp")) {
    if (fsdp != "1") fail("hsdp", "needs fsdp=1 (hybrid sharding replicates FSDP's shard group)");
    if (hsdp < 2 || dp % hsdp != 0 || dp / hsdp < 2) {
      fail("hsdp", "must divide dp = " + std::to_string(dp) + " into at least 2 replicas of at least 2 ranks (got " +
                       std::to_string(hsdp) + ")");
    }
    if (cp > 1 && tp > 1) {
      fail("hsdp", "with cp and tp needs 4 data/model mesh dims (replicas, shards, cp, tp): at most " +
                       std::to_string(kMaxMeshDims) + " are modelled");
    }
  }
  const std::string dist_opt = flag01(kv, "dist_opt", fsdp);
  // HSDP's outer no_shard: the optimizer state is sharded within the shard group only (the
  // parameter storage's split), not across the replicas.
  s.shard_optimizer = dist_opt == "1" && hsdp == 1;
  // --tp-comm-overlap: Megatron-LM accepts it only with sequence parallelism (the overlapped
  // collectives are sp's all-gather and reduce-scatter).
  const std::string tp_overlap = flag01(kv, "tp_overlap", "0");
  if (tp_overlap == "1" && (sp != "1" || tp < 2)) fail("tp_overlap", "needs sp=1 and tp > 1 (Megatron-LM's --tp-comm-overlap overlaps sequence parallelism's collectives)");
  s.overlap_tp_comm = tp_overlap == "1";
  // --overlap-p2p-communication: Megatron-core overlaps pipeline p2p only in the interleaved
  // schedule (NeMo's MegatronCommOverlapCallback turns it on whenever vp > 1).
  const std::string pp_overlap = flag01(kv, "pp_overlap", "0");
  if (pp_overlap == "1" && v < 2) fail("pp_overlap", "needs interleave > 1 (Megatron overlaps pipeline p2p only in the interleaved schedule)");
  s.overlap_p2p_comm = pp_overlap == "1";
  // --grad-reduce-in-bf16: reduce bf16 training's gradients in bf16, not its fp32 main gradients.
  const std::string grad_reduce_bf16 = flag01(kv, "grad_reduce_bf16", "0");
  s.grad_reduce_16bit = grad_reduce_bf16 == "1";
  // --overlap-param-gather: on with the distributed optimizer by default, as Megatron-Bridge's and
  // NeMo's recipes set it (DistributedDataParallelConfig(overlap_param_gather=True)).
  const std::string param_overlap = flag01(kv, "param_overlap", fsdp == "1" ? "0" : dist_opt);
  if (param_overlap == "1" && dist_opt != "1") fail("param_overlap", "needs dist_opt=1 (it overlaps the distributed optimizer's parameter all-gather)");
  s.overlap_param_gather = param_overlap == "1";
  s.overlap_cp_comm = cp_ring;
  if (kv.count("recompute") && !parse_recompute(kv["recompute"], s.recompute)) {
    fail("recompute", "must be none, selective or full (got '" + kv["recompute"] + "')");
  }
  // recompute_modules=a+b: Megatron-Core's --recompute-granularity selective --recompute-modules a b
  // (recompute_modules.hpp), replacing selective's default core_attn.
  if (kv.count("recompute_modules")) {
    std::string bad;
    if (!parse_recompute_modules(kv["recompute_modules"], s.recompute_modules, bad)) {
      std::string known;
      for (const RecomputeModuleInfo& m : recompute_modules()) known += (known.empty() ? "" : ", ") + std::string(m.name);
      fail("recompute_modules", "unknown module '" + bad + "' (known: " + known + "; join several with +)");
    }
    if (kv.count("recompute") && s.recompute != Recompute::selective) {
      fail("recompute_modules", "needs recompute=selective (Megatron's --recompute-granularity selective), not " +
                                    std::string(recompute_name(s.recompute)));
    }
    s.recompute = Recompute::selective;
    for (const RecomputeModuleInfo& m : recompute_modules()) {
      if (!(s.recompute_modules & recompute_module_bit(m.name))) continue;
      const std::string why = m.unavailable(g);
      if (!why.empty()) fail("recompute_modules", std::string(m.name) + ": " + why);
    }
  }
  if (kv.count("schedule") && !parse_schedule(kv["schedule"], s.schedule)) {
    fail("schedule", "must be gpipe, 1f1b or interleaved (got '" + kv["schedule"] + "')");
  }
  if (v > 1) {
    if (pp == 1) fail("interleave", "needs pp > 1");
    s.schedule = PipelineSchedule::interleaved;
    s.virtual_stages = v;
  }
  if (eg.moe && tp > 1 && sp != "1") {
    fail("sp", "must be 1 with experts and tp > 1 (Megatron-Core requires sequence parallelism for MoE with tensor parallelism)");
  }
  // Megatron's rank order: tp fastest, then dp, then pp → mesh [pp, dp, tp] (size-1 dims dropped).
  // With experts, dp is cut into [dp / ep', ep'] (ep' = ep with etp = tp; ep / tp with etp = 1,
  // where the expert-parallel group spans the tensor-parallel ranks): Megatron-Core's expert
  // groups order tp (etp) fastest, then ep, then edp.
  std::vector<DimRole> roles, expert_roles;
  if (pp > 1) {
    s.mesh_shape.push_back(pp);
    s.pipeline_dim = 0;
  }
  const int ep_on_dp = eg.etp == tp ? eg.ep : eg.ep / tp;
  int replicate_dim = -1;  // HSDP's replica dim among the SBP dims
  if (hsdp > 1) {  // [R, dp/R]: the shard group is the inner, consecutive ranks
    replicate_dim = static_cast<int>(roles.size());
    s.mesh_shape.push_back(hsdp);
    roles.push_back(DimRole::data);
    expert_roles.push_back(DimRole::data);
    s.mesh_shape.push_back(dp / hsdp);
    roles.push_back(DimRole::data);
    expert_roles.push_back(DimRole::data);
  } else if (dp / ep_on_dp > 1) {
    s.mesh_shape.push_back(dp / ep_on_dp);
    roles.push_back(DimRole::data);
    expert_roles.push_back(DimRole::data);
  }
  if (ep_on_dp > 1) {
    s.mesh_shape.push_back(ep_on_dp);
    roles.push_back(DimRole::data);
    expert_roles.push_back(DimRole::expert);
  }
  if (cp > 1) {  // Megatron-Core's rank order tp-cp-ep-dp-pp: cp just outside tp
    s.mesh_shape.push_back(cp);
    roles.push_back(DimRole::context);
    expert_roles.push_back(DimRole::context);
  }
  if (tp > 1) {
    s.mesh_shape.push_back(tp);
    roles.push_back(DimRole::tensor);
    expert_roles.push_back(eg.etp == tp ? DimRole::tensor : DimRole::expert);
  }
  if (roles.empty()) {
    roles.push_back(DimRole::data);
    expert_roles.push_back(DimRole::data);
  }
  if (s.mesh_shape.empty()) s.mesh_shape.push_back(1);
  if (!mesh_shape.empty() && mesh_shape != s.mesh_shape) {
    std::string own;
    for (int x : s.mesh_shape) own += (own.empty() ? "" : "x") + std::to_string(x);
    throw InputError("--mesh", "", "megatron builds its own [pp, dp, tp] mesh (" + own + " here); leave --mesh out");
  }
  make_mesh(c, s.mesh_shape, "--scheme megatron");
  const std::vector<int> sbp = s.sbp_shape();
  LoweringOptions opt;
  opt.sequence_parallel = sp == "1";
  if (eg.ep > 1) opt.expert_roles = expert_roles;
  s.op_sigs = lower_roles(g, sbp, roles, s.micro_batches, opt);
  s.param_storage = storage_from_use(g, s.op_sigs, static_cast<int>(sbp.size()));
  if (fsdp == "1") {
    shard_on_data_dims(g, sbp, roles, s.param_storage, replicate_dim);
    s.regather_in_backward = true;
    s.fsdp = true;
  }
  if (tp > 1) {
    // Megatron-LM splits attention by heads and refuses heads % tp != 0; so do we, rather
    // than pricing an attention that all-reduces its score matrix. The CLI catches this and, for
    // a zoo model, costs the uneven head split on heads padded to a multiple of tp.
    const int tdim = static_cast<int>(sbp.size()) - 1;
    for (size_t i = 0; i < g.ops.size(); ++i) {
      const Op& op = g.ops[i];
      if (op.kind != OpKind::softmax || !is_attention_core(g, op)) continue;
      const Sbp on_tp = s.op_sigs[i].out[0].dims[tdim];
      if (!(on_tp == Sbp::split(1))) {  // scores are (batch, heads, seq, seq)
        const Shape& scores = g.tensors[op.outputs[0]].shape;
        throw HeadsNotDivisible(tp, scores[1], g.name);
      }
    }
  }
  const int mtp = mtp_depths(g);
  if (!layout.empty()) {
    s.op_chunk = op_chunks_from_layout(g, layout);
    // Megatron-Core (validate_layer_layout): the MTP layers sit in the last virtual stage of
    // their pipeline rank.
    for (size_t i = 0; i < layout.size(); ++i) {
      if (layout[i].find('m') != std::string::npos && static_cast<int>(i) / pp != v - 1) {
        fail("layout", "the multi-token-prediction layers (m) are in stage " + std::to_string(i + 1) +
                           ", virtual stage " + std::to_string(static_cast<int>(i) / pp + 1) + " of " +
                           std::to_string(v) + " on pipeline rank " + std::to_string(static_cast<int>(i) % pp + 1) +
                           ": Megatron-Core needs them in a rank's last virtual stage");
      }
    }
  } else if (pp > 1) {
    // Decoder layers (ops sharing a block label, MTP blocks aside) split evenly into pp·v
    // chunks, the MTP layers on the last: the balanced layout.
    std::vector<std::string> blocks;
    for (const Op& op : g.ops) {
      if (!op.block.empty() && !is_mtp_block(op.block) && (blocks.empty() || blocks.back() != op.block)) {
        blocks.push_back(op.block);
      }
    }
    const int64_t chunks = int64_t{pp} * v;
    if (blocks.empty() || blocks.size() % chunks != 0) {
      fail("pp", std::to_string(blocks.size()) + " layers do not split evenly into pp*interleave = " +
                     std::to_string(chunks) + " chunks (layout=... places them unevenly, e.g. layout=" +
                     suggested_layout(g, blocks.size(), chunks, mtp) + ")");
    }
    s.op_chunk = op_chunks_from_layout(g, balanced_layout(blocks.size(), chunks, mtp));
    // Interleaving places chunk c on stage c % pp; the stage of an op is op_chunk % stages.
  }
  return s;
}

// The rows' builders: dp, zero1 and zero3 differ only in what they shard.
Scheme make_dp(const std::string&, const Graph& g, const ClusterSpec& c, const std::vector<int>& mesh) {
  return data_parallel("dp", g, c, mesh);
}
Scheme make_zero1(const std::string&, const Graph& g, const ClusterSpec& c, const std::vector<int>& mesh) {
  return data_parallel("zero1", g, c, mesh);
}
Scheme make_zero3(const std::string&, const Graph& g, const ClusterSpec& c, const std::vector<int>& mesh) {
  return data_parallel("zero3", g, c, mesh);
}
Scheme make_owt(const std::string&, const Graph& g, const ClusterSpec& c, const std::vector<int>& mesh) {
  return one_weird_trick(g, c, mesh);
}

std::string owt_not_applicable(const Graph& g) {
  for (const Op& op : g.ops) {
    if (op.kind == OpKind::conv2d) return "";
  }
  return "owt (conv data-parallel, FC model-parallel) applies to CNNs; " + g.name + " has no conv2d";
}

}  // namespace

const std::vector<ExpertSchemeRow>& expert_schemes() {
  static const std::vector<ExpertSchemeRow> table = {
      {"dp", "dp", "dp", "data parallel (PyTorch DDP)", make_dp},
      {"zero1", "zero1", "zero1", "data parallel with sharded optimizer state (ZeRO-1)", make_zero1},
      {"zero3", "zero3", "zero3", "fully sharded data parallel (ZeRO-3 / FSDP)", make_zero3},
      {"owt", "owt", "owt", "one weird trick (Krizhevsky 2014): conv data-parallel, FC model-parallel; CNNs only",
       make_owt, false, owt_not_applicable},
      {"megatron",
       "megatron:tp=T,pp=P,dp=D[,mb=M][,interleave=V][,sp=0|1][,recompute=...][,sg=0|1][,dist_opt=0|1]"
       "[,tp_overlap=0|1][,pp_overlap=0|1][,ep=E][,etp=1|T][,layout=Et|(tt|)*30L][,recompute_modules=a+b]"
       "[,cp=C][,cp_comm_type=p2p|all_gather][,fsdp=0|1][,hsdp=R]",
       "megatron:tp=..,pp=..,dp=..", "Megatron-LM: tensor x pipeline x data parallel (Narayanan et al. 2021)",
       megatron, true, nullptr, "megatron:tp=8,pp=1,dp=2"},
  };
  return table;
}

const ExpertSchemeRow* find_expert_scheme(std::string_view name) {
  for (const ExpertSchemeRow& row : expert_schemes()) {
    if (row.name == name) return &row;
  }
  return nullptr;
}

std::vector<std::string> expert_scheme_names() {
  std::vector<std::string> names;
  for (const ExpertSchemeRow& row : expert_schemes()) names.emplace_back(row.usage);
  return names;
}

Scheme make_scheme(const std::string& spec, const Graph& graph, const ClusterSpec& cluster,
                   const std::vector<int>& mesh_shape) {
  const size_t colon = spec.find(':');
  if (const ExpertSchemeRow* row = find_expert_scheme(std::string_view(spec).substr(0, colon))) {
    if (colon != std::string::npos && row->takes_params) return row->make(spec.substr(colon + 1), graph, cluster, mesh_shape);
    if (colon == std::string::npos && row->takes_params) {
      fail(std::string(row->name), "needs parameters, e.g. " + std::string(row->example));
    }
    if (colon == std::string::npos) return row->make("", graph, cluster, mesh_shape);
  }
  if (spec.size() > 5 && spec.substr(spec.size() - 5) == ".json") {
    return load_scheme_file(spec, graph, cluster);
  }
  std::string known;
  for (const ExpertSchemeRow& row : expert_schemes()) known += std::string(row.short_usage) + ", ";
  fail("", "unknown scheme '" + spec + "' (" + known + "or a scheme .json)");
}

}  // namespace autoddl::costmodel
