// Op classes of the cost tables (see cost_tables.hpp): ops with equal kind, attributes, work
// and operand shapes share their legal nd signatures (costmodel::nd_signatures on micro-batch
// shapes), the ZeRO storage variants, the compute time of each (op_compute, evaluate()'s compute
// phase) and the boxing-state indices of every operand, so a transformer's layers cost one
// class per position to set up.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include "autoddl/costmodel/boxing_plan.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/grad_buckets.hpp"
#include "autoddl/costmodel/op_compute.hpp"
#include "autoddl/search/cost_tables.hpp"

namespace autoddl::search {

using namespace costmodel;

namespace {

void append_shape(std::string& key, const Shape& s) {
  key += '(';
  for (int64_t x : s) key += std::to_string(x) + ',';
  key += ')';
}

// Everything the signatures and node costs of an op depend on, so equal keys share a class.
std::string class_key(const Graph& g, const Op& op, const std::vector<Shape>& shape_mb, bool recompute) {
  std::string key = std::to_string(static_cast<int>(op.kind)) + '|';
  const OpAttrs& a = op.attrs;
  for (int v : {a.kernel_h, a.kernel_w, a.stride, a.pad, static_cast<int>(a.pool), static_cast<int>(a.unary),
                static_cast<int>(a.binary), static_cast<int>(a.transpose_b), a.axis}) {
    key += std::to_string(v) + ',';
  }
  for (int p : a.perm) key += std::to_string(p) + '.';
  char buf[128];
  std::snprintf(buf, sizeof buf, "|%.17g,%.17g,%.17g,%.17g|%d|", op.work.fwd_flops, op.work.bwd_flops,
                op.work.fwd_bytes, op.work.bwd_bytes, recompute ? 1 : 0);
  key += buf;
  for (int t : op.inputs) {
    const Tensor& x = g.tensors[t];
    key += std::to_string(static_cast<int>(x.role)) + std::to_string(static_cast<int>(x.dtype)) +
           (x.producer < 0 ? "i" : "a");
    append_shape(key, x.role == TensorRole::parameter ? x.shape : shape_mb[t]);
  }
  key += "->";
  for (int t : op.outputs) {
    key += std::to_string(static_cast<int>(g.tensors[t].dtype)) + (g.tensors[t].batched ? "b" : "f");
    append_shape(key, shape_mb[t]);
  }
  return key;
}

// Storage of a parameter used in SBP `use`: as used, except that a partial use (each device
// adding its share) is stored broadcast.
NdSbp plain_storage(NdSbp use) {
  for (int d = 0; d < use.ndims; ++d) {
    if (use.dims[d].is_partial()) use.dims[d] = Sbp::broadcast();
  }
  return use;
}

}  // namespace

void CostTables::build_classes() {
  const Graph& g = *graph_;
  const int nd = static_cast<int>(sbp_shape_.size());
  const int m = opt_.micro_batches;
  // One TensorInfo per boxing table (the cache keys tables by shape, bytes and block order, as
  // evaluate() looks them up), so tensors that share a table share its local sizes.
  std::map<const BoxingTable*, TensorInfo*> info_of;
  auto info = [&](int t) -> const TensorInfo* {
    const BoxingTable* table = &cache_->get(shape_mb_[t], bytes_mb_[t], exact_block_order(g.tensors[t]));
    auto it = info_of.find(table);
    if (it != info_of.end()) return it->second;
    auto ti = std::make_unique<TensorInfo>();
    ti->table = table;
    for (const NdSbp& s : table->states()) ti->local_bytes.push_back(local_bytes(s, sbp_shape_.data(), bytes_mb_[t]));
    infos_.push_back(std::move(ti));
    return info_of[table] = infos_.back().get();
  };

  std::map<std::string, int> class_of_key;
  op_cls_.resize(g.ops.size());
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    const bool recompute = recomputed(g, op, opt_.recompute);
    // Which parameters this op stores (it reads them first): only those have a storage choice.
    unsigned stores = 0;
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      if (g.tensors[op.inputs[k]].role == TensorRole::parameter && first_reader_[op.inputs[k]] == static_cast<int>(i)) {
        stores |= 1u << k;
      }
    }
    std::string key = class_key(g, op, shape_mb_, recompute) + "|" + std::to_string(stores);
    auto it = class_of_key.find(key);
    if (it != class_of_key.end()) {
      op_cls_[i] = it->second;
      continue;
    }
    OpClass c;
    std::vector<Shape> in_shapes, out_shapes;
    for (int t : op.inputs) in_shapes.push_back(shape_mb_[t]);
    for (int t : op.outputs) out_shapes.push_back(shape_mb_[t]);
    c.sigs = nd_signatures(g, op, sbp_shape_.data(), nd, in_shapes, out_shapes);
    if (op.kind == OpKind::attention) {
      // Context parallelism's signature (queries split on the sequence, keys and values gathered)
      // stays out of the tables: their additive terms price its KV exchange once and plainly,
      // while evaluate() adds the backward re-gather and hides it under the p2p ring, so a descent
      // chased it by the wrong objective (Llama 3 8B / 16 H100: 6.06 s found against 5.97 s
      // without it). Context-parallel layouts come from the Megatron grid's cp points instead.
      c.sigs.erase(std::remove_if(c.sigs.begin(), c.sigs.end(),
                                  [&](const OpSignature& s) { return sequence_split_ranks(op, s, sbp_shape_.data()) > 1; }),
                   c.sigs.end());
    }
    AUTODDL_CHECK(!c.sigs.empty()) << "op " << op.name << " has no signature";
    const int n_in = static_cast<int>(op.inputs.size()), n_out = static_cast<int>(op.outputs.size());
    for (int k = 0; k < n_in; ++k) {
      const int t = op.inputs[k];
      const Tensor& x = g.tensors[t];
      if (x.role == TensorRole::parameter || x.producer >= 0) c.in_info[k] = info(t);
    }
    for (int o = 0; o < n_out; ++o) c.out_info[o] = info(op.outputs[o]);
    // Compute time per signature: evaluate()'s compute phase, for m micro-batches.
    auto add_choice = [&](int s, bool zero) {
      const OpSignature& sig = c.sigs[s];
      c.sig_of.push_back(s);
      c.zero.push_back(zero ? 1 : 0);
      const OpCompute oc = op_compute(cluster_->gpu, g, op, sig, m, opt_.recompute);
      c.compute_s.push_back(m * (oc.fwd_s + oc.bwd_s));
      c.dgrad_s.push_back((oc.bwd_s - oc.recompute_s) / 2);
      for (int k = 0; k < kMaxOpInputs; ++k) {
        int16_t is = -1, gs = -1, ss = -1;
        if (k < n_in && c.in_info[k]) {
          const BoxingTable& tb = *c.in_info[k]->table;
          is = static_cast<int16_t>(tb.index_of(sig.in[k]));
          gs = static_cast<int16_t>(tb.index_of(sig.in_grad[k]));
          if (g.tensors[op.inputs[k]].role == TensorRole::parameter) {
            NdSbp st = plain_storage(sig.in[k]);
            // ZeRO-3 storage: split on every replicated dim, as make_scheme("zero3") shards
            // data-parallel dims.
            if (zero) st = shard_replicated_dims(st, sbp_shape_, g.tensors[op.inputs[k]].shape);
            ss = static_cast<int16_t>(tb.index_of(st));
          }
          AUTODDL_CHECK(is >= 0 && gs >= 0) << "op " << op.name << ": operand state missing";
        }
        c.in_state.push_back(is);
        c.in_grad_state.push_back(gs);
        c.store_state.push_back(ss);
      }
      for (int o = 0; o < kMaxOpOutputs; ++o) {
        int16_t os = -1, ogs = -1;
        if (o < n_out) {
          os = static_cast<int16_t>(c.out_info[o]->table->index_of(sig.out[o]));
          ogs = static_cast<int16_t>(c.out_info[o]->table->index_of(sig.out_grad[o]));
          AUTODDL_CHECK(os >= 0 && ogs >= 0) << "op " << op.name << ": output state missing";
        }
        c.out_state.push_back(os);
        c.out_grad_state.push_back(ogs);
      }
    };
    for (int s = 0; s < static_cast<int>(c.sigs.size()); ++s) {
      add_choice(s, false);
      if (!opt_.zero_storage || stores == 0) continue;
      bool differs = false;
      for (int k = 0; k < n_in; ++k) {
        const Tensor& x = g.tensors[op.inputs[k]];
        if (!(stores >> k & 1)) continue;
        NdSbp st = plain_storage(c.sigs[s].in[k]);
        differs |= !(shard_replicated_dims(st, sbp_shape_, x.shape) == st);
      }
      if (differs) add_choice(s, true);
    }
    c.n_choices = static_cast<int>(c.sig_of.size());
    op_cls_[i] = static_cast<int>(classes_.size());
    class_of_key.emplace(std::move(key), op_cls_[i]);
    classes_.push_back(std::move(c));
  }
}

NdSbp CostTables::storage_of(int op, int slot, int c) const {
  const OpClass& k = cls(op);
  const int s = k.store_state[c * kMaxOpInputs + slot];
  AUTODDL_CHECK(s >= 0) << "operand " << slot << " of op " << op << " is not a parameter";
  return k.in_info[slot]->table->states()[s];
}

}  // namespace autoddl::search
