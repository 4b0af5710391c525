// match_megatron_layout (megatron_layout.hpp): rebuild each megatron spec the scheme's mesh and
// options allow and compare what it lowers to with the scheme itself.
#include "autoddl/costmodel/megatron_layout.hpp"

#include <vector>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/pipeline_layout.hpp"
#include "autoddl/costmodel/recompute_modules.hpp"
#include "autoddl/costmodel/sbp.hpp"
#include "autoddl/costmodel/signature.hpp"

namespace autoddl::costmodel {

namespace {

std::string flag(const char* key, bool on) { return std::string(",") + key + (on ? "=1" : "=0"); }

std::string spec_of(const MegatronLayout& l) {
  std::string s = "megatron:tp=" + std::to_string(l.tp) + ",pp=" + std::to_string(l.pp) + ",dp=" + std::to_string(l.dp) +
                  ",mb=" + std::to_string(l.micro_batch_size);
  if (l.ep > 1) s += ",ep=" + std::to_string(l.ep) + ",etp=" + std::to_string(l.etp);
  if (l.cp > 1) s += ",cp=" + std::to_string(l.cp) + (l.cp_ring ? "" : ",cp_comm_type=all_gather");
  if (l.interleave > 1) s += ",interleave=" + std::to_string(l.interleave);
  if (!l.pipeline_layout.empty()) s += ",layout=" + l.pipeline_layout;
  s += flag("sp", l.sequence_parallel) + ",recompute=" + std::string(recompute_name(l.recompute));
  if (l.recompute_modules) s += ",recompute_modules=" + recompute_modules_text(l.recompute_modules);
  if (l.interleave == 1) s += ",schedule=" + std::string(schedule_name(l.schedule));
  s += flag("sg", l.scatter_gather_sends) + flag("dist_opt", l.dist_opt) + flag("tp_overlap", l.tp_overlap) +
       flag("pp_overlap", l.pp_overlap) + flag("grad_reduce_bf16", l.grad_reduce_16bit) +
       flag("param_overlap", l.param_overlap);
  if (l.fsdp) s += ",fsdp=1";
  if (l.hsdp > 1) s += ",hsdp=" + std::to_string(l.hsdp);
  return s;
}

bool same_forward(const OpSignature& a, const OpSignature& b) {
  if (a.n_in != b.n_in || a.n_out != b.n_out) return false;
  for (int k = 0; k < a.n_in; ++k) {
    if (!(a.in[k] == b.in[k])) return false;
  }
  for (int o = 0; o < a.n_out; ++o) {
    if (!(a.out[o] == b.out[o])) return false;
  }
  return true;
}

// The first way `s` differs from the megatron lowering `ref`, "" when it does not.
std::string first_difference(const Graph& g, const Scheme& s, const Scheme& ref, int* same_ops) {
  *same_ops = 0;
  if (s.mesh_shape != ref.mesh_shape || s.pipeline_dim != ref.pipeline_dim) return "mesh";
  std::string diff;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const bool same = same_forward(s.op_sigs[i], ref.op_sigs[i]);
    *same_ops += same ? 1 : 0;
    if (!same && diff.empty()) {
      diff = "op " + g.ops[i].name + " runs " + signature_string(g, g.ops[i], s.op_sigs[i]) + ", Megatron-LM runs " +
             signature_string(g, g.ops[i], ref.op_sigs[i]);
    }
  }
  if (!diff.empty()) return diff;
  const auto chunk = [&](const Scheme& x, size_t i) { return x.op_chunk.empty() ? 0 : x.op_chunk[i]; };
  for (size_t i = 0; i < g.ops.size(); ++i) {
    if (chunk(s, i) != chunk(ref, i)) {
      return "op " + g.ops[i].name + " is in pipeline chunk " + std::to_string(chunk(s, i)) +
             ", Megatron-LM's even split puts it in chunk " + std::to_string(chunk(ref, i));
    }
  }
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    if (g.tensors[t].role != TensorRole::parameter) continue;
    if (!(s.param_storage[t] == ref.param_storage[t])) {
      return "parameter " + g.tensors[t].name + " is stored " + to_string(s.param_storage[t]) +
             ", Megatron-LM stores it " + to_string(ref.param_storage[t]);
    }
  }
  if (s.regather_in_backward != ref.regather_in_backward || s.fsdp != ref.fsdp) {
    return s.fsdp || ref.fsdp ? "parameters are gathered per layer without FSDP's prefetch"
                              : "parameters are gathered again for backward (ZeRO-3) without FSDP's prefetch, which "
                                "Megatron-LM's layouts do not do";
  }
  if (s.bucket_bytes != ref.bucket_bytes) return "gradient buckets of " + std::to_string(s.bucket_bytes) + " bytes";
  return "";
}

}  // namespace

MegatronMatch match_megatron_layout(const Graph& g, const ClusterSpec& c, const Scheme& s) {
  MegatronMatch out;
  // Megatron's mesh is [pp, dp, tp] with size-1 dims dropped; with experts, dp is cut into
  // [dp/ep', ep'] (expert_schemes.cpp): ep' = ep with etp = tp, ep/tp with etp = 1.
  std::vector<int> sbp = s.sbp_shape();
  if (sbp.size() == 1 && sbp[0] == 1) sbp.clear();
  const bool moe = routed_experts(g) > 0;
  struct Cut {
    int dp, tp, ep, etp, cp = 1, hsdp = 1;
  };
  std::vector<Cut> cuts;
  if (sbp.empty()) cuts = {{1, 1, 1, 1}};
  else if (sbp.size() == 1) cuts = {{sbp[0], 1, 1, 1}, {1, sbp[0], 1, sbp[0]}};
  else if (sbp.size() == 2) cuts = {{sbp[0], sbp[1], 1, sbp[1]}};
  if (moe) {
    if (sbp.size() == 1) {
      cuts.push_back({sbp[0], 1, sbp[0], 1});  // [ep]
      cuts.push_back({1, sbp[0], sbp[0], 1});  // ep = tp, etp = 1
    }
    if (sbp.size() == 2) {
      cuts.push_back({sbp[0], sbp[1], sbp[1], 1});             // ep = tp, etp = 1
      cuts.push_back({sbp[0] * sbp[1], 1, sbp[1], 1});       // [dp/ep, ep]
      cuts.push_back({sbp[0], sbp[1], sbp[0], sbp[1]});      // [ep, tp], etp = tp
      cuts.push_back({sbp[0], sbp[1], sbp[0] * sbp[1], 1});  // [ep/tp, tp], etp = 1
    }
    if (sbp.size() == 3) {
      cuts.push_back({sbp[0] * sbp[1], sbp[2], sbp[1], sbp[2]});
      cuts.push_back({sbp[0] * sbp[1], sbp[2], sbp[1] * sbp[2], 1});
    }
  }
  // Context parallelism sits between dp and tp ([pp, dp, cp, tp]); only with a fused attention.
  if (fused_attention(g) && !moe) {
    if (sbp.size() == 1) cuts.push_back({1, 1, 1, 1, sbp[0]});
    if (sbp.size() == 2) {
      cuts.push_back({sbp[0], 1, 1, 1, sbp[1]});
      cuts.push_back({1, sbp[1], 1, sbp[1], sbp[0]});
    }
    if (sbp.size() == 3) cuts.push_back({sbp[0], sbp[2], 1, sbp[2], sbp[1]});
  }
  // HSDP cuts dp into [replicas, shard group] ([pp, R, dp/R, cp, tp]); only with FSDP.
  if (s.fsdp && !moe && sbp.size() >= 2) {
    const int dp = sbp[0] * sbp[1];
    if (sbp.size() == 2) cuts.push_back({dp, 1, 1, 1, 1, sbp[0]});
    if (sbp.size() == 3) {
      cuts.push_back({dp, sbp[2], 1, sbp[2], 1, sbp[0]});
      if (fused_attention(g)) cuts.push_back({dp, 1, 1, 1, sbp[2], sbp[0]});
    }
  }
  if (cuts.empty()) {
    out.why_not = "a " + std::to_string(sbp.size()) + "-D data/model mesh: Megatron-LM's is [pp, dp, cp, tp]";
    return out;
  }
  if (s.pipeline_dim > 0) {
    out.why_not = "the pipeline is mesh dim " + std::to_string(s.pipeline_dim) + ": Megatron-LM's is the outermost";
    return out;
  }
  // The stage partition as a layout: tried after the even split, for a scheme whose layers are
  // not evenly split (or a model whose layers do not split evenly).
  const std::string uneven = s.stages() > 1 ? layout_of_op_chunks(g, s.op_chunk, s.stages() * s.virtual_stages) : "";
  std::vector<std::string> layouts = {""};
  if (!uneven.empty()) layouts.push_back(uneven);
  int best_same = -1;
  for (const std::string& pipeline_layout : layouts) {
    for (const Cut& cut : cuts) {
      const int dp = cut.dp, tp = cut.tp;
      MegatronLayout l;
      l.tp = tp;
      l.ep = cut.ep;
      l.etp = cut.etp;
      l.cp = cut.cp;
      l.cp_ring = s.overlap_cp_comm || cut.cp == 1;
      l.pp = s.stages();
      l.dp = dp;
      l.global_batch_size = g.batch;
      if (g.batch % (static_cast<int64_t>(dp) * s.micro_batches) != 0) continue;
      l.micro_batch_size = g.batch / (static_cast<int64_t>(dp) * s.micro_batches);
      l.interleave = s.virtual_stages;
      l.pipeline_layout = pipeline_layout;
      l.recompute = s.recompute;
      l.recompute_modules = s.recompute_modules;
      l.schedule = s.schedule;
      l.dist_opt = s.shard_optimizer || s.fsdp;  // HSDP's optimizer is sharded within its shard group
      l.tp_overlap = s.overlap_tp_comm;
      l.pp_overlap = s.overlap_p2p_comm;
      l.param_overlap = s.overlap_param_gather;
      l.grad_reduce_16bit = s.grad_reduce_16bit;
      l.scatter_gather_sends = s.scatter_gather_sends;
      l.fsdp = s.fsdp;
      l.hsdp = cut.hsdp;
      for (bool sp : {false, true}) {
        if (sp && tp < 2) continue;
        l.sequence_parallel = sp;
        l.spec = spec_of(l);
        Scheme ref;
        try {
          ref = make_scheme(l.spec, g, c, {});
        } catch (const InputError& e) {
          if (best_same < 0 && out.why_not.empty()) out.why_not = l.spec + ": " + e.what();
          continue;
        }
        int same = 0;
        const std::string diff = first_difference(g, s, ref, &same);
        if (diff.empty()) {
          out.layout = l;
          out.why_not.clear();
          out.nearest.reset();
          return out;
        }
        if (same > best_same) {
          best_same = same;
          out.why_not = diff + " (nearest layout " + l.spec + ")";
          out.nearest = l;
        }
      }
    }
  }
  if (out.why_not.empty()) out.why_not = "no Megatron-LM layout has this mesh and batch";
  return out;
}

}  // namespace autoddl::costmodel
