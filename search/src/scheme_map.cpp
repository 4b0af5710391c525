// Choices ↔ Schemes and the search's seeds (see scheme_map.hpp).
#include "autoddl/search/scheme_map.hpp"

#include <random>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"

namespace autoddl::search {

using namespace costmodel;

Scheme to_scheme(const CostTables& t, const std::vector<int>& choice, const std::string& name) {
  const Graph& g = t.graph();
  const TableOptions& o = t.options();
  Scheme s;
  s.name = name;
  s.mesh_shape = o.mesh_shape;
  s.pipeline_dim = o.pipeline_dim;
  s.micro_batches = o.micro_batches;
  s.recompute = o.recompute;
  s.shard_optimizer = o.shard_optimizer;
  s.schedule = o.virtual_stages > 1 ? PipelineSchedule::interleaved : PipelineSchedule::one_f_one_b;
  s.virtual_stages = o.virtual_stages;
  s.overlap_p2p_comm = o.overlap_p2p;
  const int nd = static_cast<int>(t.sbp_shape().size());
  s.op_sigs.resize(g.ops.size());
  for (int i = 0; i < t.ops(); ++i) s.op_sigs[i] = t.signature(i, choice[i]);
  s.param_storage.assign(g.tensors.size(), NdSbp::all(Sbp::broadcast(), nd));
  for (size_t x = 0; x < g.tensors.size(); ++x) {
    const int r0 = t.first_reader(static_cast<int>(x));
    if (g.tensors[x].role != TensorRole::parameter || r0 < 0) continue;
    int slot = 0;
    while (g.ops[r0].inputs[slot] != static_cast<int>(x)) ++slot;
    s.param_storage[x] = t.storage_of(r0, slot, choice[r0]);
    s.regather_in_backward |= t.zero_choice(r0, choice[r0]);
  }
  if (t.stages() > 1) {
    s.op_chunk.resize(g.ops.size());
    for (int i = 0; i < t.ops(); ++i) s.op_chunk[i] = o.virtual_stages > 1 ? o.op_chunk[i] : t.stage(i);
  }
  return s;
}

void keep_framework_options(const Scheme& from, Scheme& to) {
  to.scatter_gather_sends = from.scatter_gather_sends;
  to.schedule = from.schedule;
  to.bucket_bytes = from.bucket_bytes;
  to.overlap_tp_comm = from.overlap_tp_comm;
  to.overlap_p2p_comm = from.overlap_p2p_comm;
  to.overlap_param_gather = from.overlap_param_gather && to.shard_optimizer;
  to.grad_reduce_16bit = from.grad_reduce_16bit;
  to.overlap_cp_comm = from.overlap_cp_comm;
  to.fsdp = from.fsdp && to.regather_in_backward;
}

TableOptions table_options_of(const Scheme& e, int n_ops) {
  TableOptions o;
  o.mesh_shape = e.mesh_shape;
  o.pipeline_dim = e.pipeline_dim;
  o.micro_batches = e.micro_batches;
  o.recompute = e.recompute;
  o.shard_optimizer = e.shard_optimizer;
  if (e.stages() > 1) {
    o.op_stage.assign(n_ops, 0);
    for (int i = 0; i < n_ops; ++i) o.op_stage[i] = e.op_chunk.empty() ? 0 : e.op_chunk[i] % e.stages();
  }
  if (e.virtual_stages > 1) {  // interleaved: v chunks per stage, their bubble and in-flight memory
    o.virtual_stages = e.virtual_stages;
    o.op_chunk = e.op_chunk;
  }
  o.overlap_p2p = e.overlap_p2p_comm;
  return o;
}

bool from_signatures(const CostTables& t, const std::vector<OpSignature>& sigs,
                     const std::vector<NdSbp>* storage, std::vector<int>& choice, bool zero_all) {
  const Graph& g = t.graph();
  choice.assign(t.ops(), 0);
  for (int i = 0; i < t.ops(); ++i) {
    const Op& op = g.ops[i];
    bool want_zero = zero_all;
    for (size_t k = 0; storage && k < op.inputs.size(); ++k) {
      const int x = op.inputs[k];
      if (g.tensors[x].role != TensorRole::parameter || t.first_reader(x) != i) continue;
      NdSbp plain = sigs[i].in[k];
      for (int d = 0; d < plain.ndims; ++d) {
        if (plain.dims[d].is_partial()) plain.dims[d] = Sbp::broadcast();
      }
      want_zero |= !((*storage)[x] == plain);
    }
    int found = -1;
    for (int c = 0; c < t.choices(i); ++c) {
      const OpSignature& s = t.signature(i, c);
      bool same = true;
      for (int k = 0; k < s.n_in && same; ++k) same = s.in[k] == sigs[i].in[k];
      for (int k = 0; k < s.n_out && same; ++k) same = s.out[k] == sigs[i].out[k];
      if (!same) continue;
      if (found < 0 || t.zero_choice(i, c) == want_zero) found = c;
      if (t.zero_choice(i, c) == want_zero) break;
    }
    if (found < 0) return false;
    choice[i] = found;
  }
  return true;
}

std::vector<Seed> make_seeds(const CostTables& t, int random_restarts, uint64_t rng_seed) {
  const Graph& g = t.graph();
  const std::vector<int>& shape = t.sbp_shape();
  const int nd = static_cast<int>(shape.size());
  std::vector<Seed> seeds;
  auto lowered = [&](const std::string& name, std::vector<DimRole> roles, bool zero, LoweringOptions lo = {}) {
    std::vector<OpSignature> sigs;
    try {
      sigs = lower_roles(g, shape, roles, t.options().micro_batches, lo);
    } catch (const InputError&) {
      return;  // no signature fits these roles on this mesh: not a seed
    }
    Seed s{name, {}};
    if (from_signatures(t, sigs, nullptr, s.choice, zero)) seeds.push_back(std::move(s));
  };
  lowered("dp", std::vector<DimRole>(nd, DimRole::data), false);
  if (t.options().zero_storage) lowered("zero3", std::vector<DimRole>(nd, DimRole::data), true);
  // Megatron-like: the last dim tensor-parallel, the others data; then every other mix of
  // data and tensor dims ("roles:TD" = dim 0 tensor, dim 1 data).
  std::vector<DimRole> mega(nd, DimRole::data);
  mega.back() = DimRole::tensor;
  if (shape.back() > 1) lowered("megatron", mega, false);
  for (int mask = 1; mask < (1 << nd); ++mask) {
    std::vector<DimRole> roles(nd);
    std::string name = "roles:";
    bool trivial = false;
    for (int d = 0; d < nd; ++d) {
      const bool tensor = (mask >> (nd - 1 - d)) & 1;
      roles[d] = tensor ? DimRole::tensor : DimRole::data;
      name += tensor ? 'T' : 'D';
      trivial |= tensor && shape[d] == 1;
    }
    if (!trivial && roles != mega) lowered(name, roles, false);
    // The same with sequence parallelism on the tensor dims (Korthikanti et al. 2022).
    if (!trivial) {
      LoweringOptions sp;
      sp.sequence_parallel = true;
      lowered(name + "+sp", roles, false, sp);
    }
  }
  // Axis patterns ("axes:01" = batch-major activations split on axis 0 on dim 0 and on axis 1,
  // the sequence or channels, on dim 1): per op the choice that splits most of its batch-major
  // operands that way, the cheaper node on ties. Reaches sequence- and context-parallel layouts
  // that the data/tensor roles do not.
  const std::vector<bool> bm = batch_major_tensors(g);
  for (int mask = 1; mask < (1 << nd); ++mask) {
    std::string name = "axes:";
    for (int d = 0; d < nd; ++d) name += (mask >> (nd - 1 - d)) & 1 ? '1' : '0';
    Seed seed{name, std::vector<int>(t.ops(), 0)};
    for (int i = 0; i < t.ops(); ++i) {
      const Op& op = g.ops[i];
      int best_score = -1;
      double best_node = 0;
      for (int c = 0; c < t.choices(i); ++c) {
        const OpSignature& sig = t.signature(i, c);
        int score = 0;
        auto count = [&](const NdSbp& sbp) {
          for (int d = 0; d < nd; ++d) score += sbp.dims[d] == Sbp::split((mask >> (nd - 1 - d)) & 1);
        };
        for (size_t k = 0; k < op.inputs.size(); ++k) {
          if (bm[op.inputs[k]]) count(sig.in[k]);
        }
        for (size_t o = 0; o < op.outputs.size(); ++o) {
          if (bm[op.outputs[o]]) count(sig.out[o]);
        }
        const double node = t.node_s(i, c);
        if (score > best_score || (score == best_score && node < best_node)) {
          best_score = score;
          best_node = node;
          seed.choice[i] = c;
        }
      }
    }
    seeds.push_back(std::move(seed));
  }
  // One weird trick (make_scheme("owt")): convolutions data-parallel, the rest tensor-parallel.
  bool conv = false;
  for (const Op& op : g.ops) conv |= op.kind == OpKind::conv2d;
  if (conv) {
    LoweringOptions lo;
    lo.conv_data_parallel = true;
    lowered("owt", std::vector<DimRole>(nd, DimRole::tensor), false, lo);
  }
  for (int r = 0; r < random_restarts; ++r) {
    const uint64_t s = rng_seed + static_cast<uint64_t>(r);
    std::mt19937_64 rng(s);
    Seed seed{"random:" + std::to_string(s), std::vector<int>(t.ops())};
    for (int i = 0; i < t.ops(); ++i) {
      seed.choice[i] = static_cast<int>(rng() % static_cast<uint64_t>(t.choices(i)));
    }
    seeds.push_back(std::move(seed));
  }
  return seeds;
}

}  // namespace autoddl::search
