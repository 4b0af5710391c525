// The search's cost tables (see cost_tables.hpp): construction, per-op node costs and memory,
// and the terms, each priced by the phase functions of costmodel::evaluate() (docs/
// architecture.md, "evaluate() phases"): compute (op_compute, in op_classes.cpp), parameter
// gather and gradient sync into storage (boxing_plan.hpp, grad_buckets.hpp), forward and
// backward boxing per edge with the gradient-sum rule for tensors read by several ops,
// send/recv across stages (stage_send_s), memory (param_memory, in_flight_micro_batches).
#include "autoddl/search/cost_tables.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <string>

#include "autoddl/costmodel/activation_memory.hpp"
#include "autoddl/costmodel/boxing_plan.hpp"
#include "autoddl/costmodel/compute.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/eval_frame.hpp"
#include "autoddl/costmodel/grad_buckets.hpp"
#include "autoddl/costmodel/mesh.hpp"
#include "autoddl/costmodel/op_compute.hpp"
#include "autoddl/costmodel/op_registry.hpp"
#include "autoddl/costmodel/stage_memory.hpp"
#include "autoddl/costmodel/timeline.hpp"

namespace autoddl::search {

using namespace costmodel;

double in_flight(int stage, int stages, int micro_batches, int virtual_stages) {
  const PipelineSchedule schedule = virtual_stages > 1 ? PipelineSchedule::interleaved : PipelineSchedule::one_f_one_b;
  return in_flight_micro_batches(stage, stages, micro_batches, schedule, virtual_stages);
}

double CostTables::in_flight(int stage) const {
  return search::in_flight(stage, stages_, opt_.micro_batches, opt_.virtual_stages);
}

CostTables::CostTables(const Graph& graph, const ClusterSpec& cluster, TableOptions opt)
    : graph_(&graph), cluster_(&cluster), opt_(std::move(opt)) {
  const DeviceMesh mesh = make_mesh(cluster, opt_.mesh_shape, "--mesh");
  AUTODDL_CHECK(opt_.pipeline_dim < mesh.ndims()) << "pipeline dim out of range";
  stages_ = opt_.pipeline_dim < 0 ? 1 : opt_.mesh_shape[opt_.pipeline_dim];
  // As evaluate() splits it, calibration included: the tables price every collective with the
  // cluster's measured or fitted times where evaluate() does, so on a calibrated cluster the
  // descent follows the numbers the result is reported in.
  PipelineSplit split = split_pipeline_dim(mesh, opt_.pipeline_dim);
  DeviceMesh& sbp_mesh = split.sbp_mesh;
  pp_tier_ = split.tier;
  sbp_shape_ = sbp_mesh.shape();
  cache_ = std::make_unique<BoxingCache>(sbp_mesh);

  const int n_ops = static_cast<int>(graph.ops.size());
  const int n_t = static_cast<int>(graph.tensors.size());
  op_stage_ = opt_.op_stage.empty() ? std::vector<int>(n_ops, 0) : opt_.op_stage;
  AUTODDL_CHECK(static_cast<int>(op_stage_.size()) == n_ops) << "op_stage needs one stage per op";
  for (int s : op_stage_) AUTODDL_CHECK(s >= 0 && s < stages_) << "stage " << s << " out of range";
  AUTODDL_CHECK(opt_.virtual_stages >= 1) << "virtual_stages must be at least 1";
  if (opt_.virtual_stages > 1) {
    AUTODDL_CHECK(stages_ > 1) << "interleaving needs a pipeline";
    AUTODDL_CHECK(static_cast<int>(opt_.op_chunk.size()) == n_ops) << "interleaving needs one chunk per op";
    for (int i = 0; i < n_ops; ++i) {
      AUTODDL_CHECK(opt_.op_chunk[i] % stages_ == op_stage_[i]) << "op " << i << ": chunk and stage disagree";
    }
  }
  bubble_factor_ = pipeline_bubble_factor(stages_, opt_.virtual_stages, opt_.micro_batches);
  shape_mb_.resize(n_t);
  bytes_mb_.resize(n_t);
  for (int t = 0; t < n_t; ++t) {
    shape_mb_[t] = micro_batch_shape(graph.tensors[t], opt_.micro_batches);
    bytes_mb_[t] = micro_batch_bytes(graph.tensors[t], shape_mb_[t]);
  }
  recompute_op_.resize(n_ops);
  for (int i = 0; i < n_ops; ++i) recompute_op_[i] = recomputed(graph, graph.ops[i], opt_.recompute) ? 1 : 0;
  weight_gemm_op_.resize(n_ops);
  for (int i = 0; i < n_ops; ++i) weight_gemm_op_[i] = multiplies_weight(graph, graph.ops[i]) ? 1 : 0;
  first_reader_.assign(n_t, -1);
  for (int i = 0; i < n_ops; ++i) {
    for (int t : graph.ops[i].inputs) {
      if (first_reader_[t] < 0) first_reader_[t] = i;
    }
  }
  const double cap = opt_.memory_capacity_bytes >= 0 ? opt_.memory_capacity_bytes : usable_memory_bytes(cluster.gpu);
  capacity_.assign(stages_, cap);
  build_classes();
  build_nodes();
  build_terms();
}

void CostTables::build_nodes() {
  const Graph& g = *graph_;
  const int n_ops = ops();
  const int m = opt_.micro_batches;
  const DType train_dtype = training_dtype(g);
  const double opt_bpp = optimizer_bytes_per_param(train_dtype), grad_bpp = grad_bytes_per_param(train_dtype);
  // What backward keeps of each tensor (activation_memory.hpp, as evaluate() counts it).
  const ActivationFactors af = activation_factors(g, opt_.recompute);
  // Blocks per stage (full recompute keeps one block's activations: charged as an average).
  std::vector<std::set<std::string>> blocks(stages_);
  for (int i = 0; i < n_ops; ++i) {
    if (!g.ops[i].block.empty()) blocks[op_stage_[i]].insert(g.ops[i].block);
  }
  // Stages in which each parameter is read, first reader per stage.
  std::map<std::pair<int, int>, int> first_in_stage;  // (tensor, stage) -> op
  for (int i = 0; i < n_ops; ++i) {
    for (int t : g.ops[i].inputs) first_in_stage.emplace(std::make_pair(t, op_stage_[i]), i);
  }
  op_mem_terms_.assign(n_ops, {});
  auto param_mem = [&](const Tensor& x, const NdSbp& st) {
    return param_memory(x, st, sbp_shape_, opt_.shard_optimizer, opt_bpp, grad_bpp);
  };

  begin_.resize(n_ops + 1);
  int total = 0;
  for (int i = 0; i < n_ops; ++i) {
    begin_[i] = total;
    total += choices(i);
  }
  begin_[n_ops] = total;
  node_s_.assign(total, 0);
  mem_bytes_.assign(total, 0);
  act_bytes_.assign(total, 0);
  for (int i = 0; i < n_ops; ++i) {
    const Op& op = g.ops[i];
    const OpClass& k = cls(i);
    const int st = op_stage_[i];
    const double flight = in_flight(st);
    for (int c = 0; c < k.n_choices; ++c) {
      double node = k.compute_s[c] * bubble_factor_, mem = 0, act = 0;
      for (size_t slot = 0; slot < op.inputs.size(); ++slot) {
        const int t = op.inputs[slot];
        const Tensor& x = g.tensors[t];
        if (x.role != TensorRole::parameter || first_reader_[t] != i) continue;
        const int q = c * kMaxOpInputs + static_cast<int>(slot);
        const BoxingTable& tb = *k.in_info[slot]->table;
        const int store = k.store_state[q];
        node += tb.time_s(store, k.in_state[q]) * m * bubble_factor_ * param_gather_runs(k.zero[c]);  // ZeRO-3 regathers
        // ZeRO-1 reduce-scatters into the shard it updates and all-gathers it after the step
        // (evaluate() exposes the gather after the optimizer).
        const GradSyncStates sync =
            grad_sync_states(tb, k.in_grad_state[q], store, opt_.shard_optimizer, sbp_shape_, x.shape);
        node += opt_.sync_weight * tb.time_s(sync.from, sync.to);  // gradient sync
        if (sync.to != sync.storage) node += tb.time_s(sync.to, sync.storage);
        // The optimizer step is linear in the parameters but for its one launch (per stage).
        const ParamMemory pm = param_mem(x, tb.states()[store]);
        const double elems = pm.optimizer_params;
        if (elems > 0) node += optimizer_step_s(cluster_->gpu, elems, train_dtype) - cluster_->gpu.launch_overhead_s;
        mem += pm.bytes;
      }
      for (size_t o = 0; o < op.outputs.size(); ++o) {
        const int t = op.outputs[o];
        if (af.kept[t] == 0 && af.recomputed[t] == 0) continue;
        if (keeping_stage(g, op_stage_, t, st) != st) continue;  // a MemTerm on the receiver (below)
        const double local = k.out_info[o]->local_bytes[k.out_state[c * kMaxOpOutputs + o]];
        act += af.kept[t] * local * flight +
               af.recomputed[t] * local / static_cast<double>(std::max<size_t>(1, blocks[st].size()));
      }
      node_s_[begin_[i] + c] = node;
      mem_bytes_[begin_[i] + c] = mem + act;
      act_bytes_[begin_[i] + c] = act;
    }
  }
  // A tensor sent to another stage is kept there, by the receiver (stage_memory.hpp).
  for (int i = 0; i < n_ops; ++i) {
    const Op& op = g.ops[i];
    const OpClass& k = cls(i);
    for (size_t o = 0; o < op.outputs.size(); ++o) {
      const int t = op.outputs[o];
      const int ks = keeping_stage(g, op_stage_, t, op_stage_[i]);
      if ((af.kept[t] == 0 && af.recomputed[t] == 0) || ks == op_stage_[i]) continue;
      MemTerm mt{i, ks, static_cast<int>(extra_mem_.size())};
      for (int c = 0; c < k.n_choices; ++c) {
        const double local = k.out_info[o]->local_bytes[k.out_state[c * kMaxOpOutputs + o]];
        extra_mem_.push_back(af.kept[t] * local * in_flight(ks) +
                             af.recomputed[t] * local / static_cast<double>(std::max<size_t>(1, blocks[ks].size())));
      }
      op_mem_terms_[i].push_back(static_cast<int>(mem_terms_.size()));
      mem_terms_.push_back(mt);
    }
  }
  // A parameter read in several stages is held by each; its storage is its first reader's.
  for (const auto& [key, reader] : first_in_stage) {
    const auto [t, st] = key;
    const Tensor& x = g.tensors[t];
    const int r0 = first_reader_[t];
    if (x.role != TensorRole::parameter || reader == r0) continue;
    const OpClass& k = cls(r0);
    int slot = 0;
    while (g.ops[r0].inputs[slot] != t) ++slot;
    MemTerm mt{r0, st, static_cast<int>(extra_mem_.size())};
    for (int c = 0; c < k.n_choices; ++c) extra_mem_.push_back(param_mem(x, storage_of(r0, slot, c)).bytes);
    op_mem_terms_[r0].push_back(static_cast<int>(mem_terms_.size()));
    mem_terms_.push_back(mt);
  }
}

void CostTables::build_terms() {
  const Graph& g = *graph_;
  const int n_ops = ops();
  const double m = opt_.micro_batches * bubble_factor_;  // per-micro-batch boxing, bubble included
  std::vector<int> out_slot(g.tensors.size(), -1);
  for (const Op& op : g.ops) {
    for (size_t o = 0; o < op.outputs.size(); ++o) out_slot[op.outputs[o]] = static_cast<int>(o);
  }
  auto add_term = [&](Term t, const std::vector<std::pair<int, int>>& members) {
    t.first = static_cast<int>(term_ops_.size());
    t.count = static_cast<int>(members.size());
    for (const auto& [op, port] : members) {
      term_ops_.push_back(op);
      term_ports_.push_back(static_cast<int8_t>(port));
    }
    terms_.push_back(t);
  };
  // Forward and backward groups: (tensor, consumer stage) -> consumers, in op order.
  std::map<std::pair<int, int>, std::vector<std::pair<int, int>>> groups, fwd_groups;
  std::set<std::pair<int, int>> param_first_in_stage;
  for (int i = 0; i < n_ops; ++i) {
    const Op& op = g.ops[i];
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      const int t = op.inputs[k];
      const Tensor& x = g.tensors[t];
      const int slot = static_cast<int>(k);
      if (x.role == TensorRole::parameter) {
        const bool first_here = param_first_in_stage.insert({t, op_stage_[i]}).second;
        const int r0 = first_reader_[t];
        if (r0 == i) continue;
        int slot0 = 0;
        while (g.ops[r0].inputs[slot0] != t) ++slot0;
        Term tm;
        tm.kind = TermKind::tied;
        tm.info = cls(i).in_info[slot];
        tm.scale = m;
        tm.sync_weight = first_here && op_stage_[i] != op_stage_[r0] ? opt_.sync_weight : 0;
        add_term(tm, {{r0, slot0}, {i, slot}});
        continue;
      }
      const int p = x.producer;
      if (p < 0) continue;
      fwd_groups[{t, op_stage_[i]}].push_back({i, slot});
      if (has_gradient(x)) groups[{t, op_stage_[i]}].push_back({i, slot});
    }
  }
  // Forward: per (tensor, consumer stage) the producer's output is sent once and boxed once
  // per distinct target state, the result shared by the readers (as evaluate() charges it).
  for (const auto& [key, members] : fwd_groups) {
    const int t = key.first;
    const int p = g.tensors[t].producer;
    Term fwd;
    fwd.kind = TermKind::forward;
    fwd.info = cls(members[0].first).in_info[members[0].second];
    fwd.scale = m;
    fwd.cross_stage = op_stage_[p] != key.second;
    std::vector<std::pair<int, int>> all{{p, out_slot[t]}};
    all.insert(all.end(), members.begin(), members.end());
    add_term(fwd, all);
  }
  for (const auto& [key, members] : groups) {
    const int t = key.first;
    const int p = g.tensors[t].producer;
    Term bwd;
    bwd.kind = TermKind::backward;
    bwd.info = cls(members[0].first).in_info[members[0].second];
    bwd.scale = m;
    bwd.cross_stage = op_stage_[p] != key.second;
    std::vector<std::pair<int, int>> all{{p, out_slot[t]}};
    all.insert(all.end(), members.begin(), members.end());
    add_term(bwd, all);
  }
  // Terms per op (an op appearing twice in one term lists it once).
  std::vector<std::vector<int>> per(n_ops);
  for (int t = 0; t < terms(); ++t) {
    const Term& tm = terms_[t];
    for (int j = 0; j < tm.count; ++j) {
      const int op = term_ops_[tm.first + j];
      if (per[op].empty() || per[op].back() != t) per[op].push_back(t);
    }
  }
  op_terms_begin_.assign(n_ops + 1, 0);
  for (int i = 0; i < n_ops; ++i) {
    op_terms_begin_[i + 1] = op_terms_begin_[i] + static_cast<int>(per[i].size());
    op_terms_.insert(op_terms_.end(), per[i].begin(), per[i].end());
  }
}

double CostTables::forward_send_s(const Term& t, int out_state) const {
  if (!t.cross_stage || opt_.overlap_p2p) return 0;
  return stage_send_s(pp_tier_, t.info->local_bytes[out_state]) * t.scale;
}

double CostTables::backward_pair_s(const Term& t, int g, int og) const {
  double s = t.info->table->time_s(g, og);
  if (t.cross_stage && !opt_.overlap_p2p) s += stage_send_s(pp_tier_, t.info->local_bytes[g]);
  return s * t.scale;
}

int CostTables::term_key(int ti, int l, int c, uint64_t* out) const {
  const Term& t = terms_[ti];
  const int op = term_ops_[t.first + l];
  const int port = term_ports_[t.first + l];
  const OpClass& k = cls(op);
  auto state = [](int16_t v) { return static_cast<uint64_t>(static_cast<uint16_t>(v)); };
  switch (t.kind) {
    case TermKind::forward: {
      if (l == 0) {
        out[0] = state(k.out_state[c * kMaxOpOutputs + port]);
        return 1;
      }
      out[0] = state(k.in_state[c * kMaxOpInputs + port]);
      // The backward re-gather hidden under the readers' data-gradient GEMMs reads dgrad_s.
      if (!weight_gemm_op_[op] || port != 0) return 1;
      std::memcpy(&out[1], &k.dgrad_s[c], sizeof(double));
      return 2;
    }
    case TermKind::backward:
      out[0] = state(l == 0 ? k.out_grad_state[c * kMaxOpOutputs + port] : k.in_grad_state[c * kMaxOpInputs + port]);
      return 1;
    case TermKind::tied:
      if (l == 0) {
        out[0] = state(k.store_state[c * kMaxOpInputs + port]);
        out[1] = k.zero[c];
      } else {
        out[0] = state(k.in_state[c * kMaxOpInputs + port]);
        out[1] = state(k.in_grad_state[c * kMaxOpInputs + port]);
      }
      return 2;
  }
  return 0;
}

double CostTables::term_cost(int ti, const int* choice) const {
  const Term& t = terms_[ti];
  const int* ops = &term_ops_[t.first];
  const int8_t* ports = &term_ports_[t.first];
  const BoxingTable& tb = *t.info->table;
  switch (t.kind) {
    case TermKind::forward: {
      const int p = ops[0];
      const int a = cls(p).out_state[choice[p] * kMaxOpOutputs + ports[0]];
      double s = forward_send_s(t, a);
      for (int j = 1; j < t.count; ++j) {
        const int b = cls(ops[j]).in_state[choice[ops[j]] * kMaxOpInputs + ports[j]];
        bool dup = false;
        for (int l = 1; l < j && !dup; ++l) dup = cls(ops[l]).in_state[choice[ops[l]] * kMaxOpInputs + ports[l]] == b;
        // A recomputed reader boxes again when its forward re-runs in backward.
        if (dup) continue;
        const double box = tb.time_s(a, b);
        s += box * t.scale * forward_boxing_runs(recompute_op_[ops[j]]);
        // A weight GEMM's input gathered from a smaller layout is gathered again in backward,
        // hidden under the data-gradient GEMMs of the readers that share it (as evaluate()).
        if (recompute_op_[ops[j]] || !weight_gemm_op_[ops[j]] || ports[j] != 0 || box <= 0) continue;
        if (t.info->local_bytes[b] <= t.info->local_bytes[a]) continue;
        double dgrad = 0;
        for (int l = 1; l < t.count; ++l) {
          if (weight_gemm_op_[ops[l]] && ports[l] == 0 && cls(ops[l]).in_state[choice[ops[l]] * kMaxOpInputs] == b) {
            dgrad += cls(ops[l]).dgrad_s[choice[ops[l]]];
          }
        }
        s += std::max(0.0, box - dgrad) * t.scale;
      }
      return s;
    }
    case TermKind::backward: {
      const int p = ops[0];
      const int og = cls(p).out_grad_state[choice[p] * kMaxOpOutputs + ports[0]];
      double s = 0;
      for (int j = 1; j < t.count; ++j) {
        const int gj = cls(ops[j]).in_grad_state[choice[ops[j]] * kMaxOpInputs + ports[j]];
        bool dup = false;
        for (int l = 1; l < j && !dup; ++l) {
          dup = cls(ops[l]).in_grad_state[choice[ops[l]] * kMaxOpInputs + ports[l]] == gj;
        }
        if (!dup) s += backward_pair_s(t, gj, og);
      }
      return s;
    }
    case TermKind::tied: {
      const int r0 = ops[0], r = ops[1];
      const OpClass& k0 = cls(r0);
      const OpClass& k = cls(r);
      const int store = k0.store_state[choice[r0] * kMaxOpInputs + ports[0]];
      const int q = choice[r] * kMaxOpInputs + ports[1];
      double s = tb.time_s(store, k.in_state[q]) * t.scale * param_gather_runs(k0.zero[choice[r0]]);
      // Into storage, not the ZeRO-1 shard evaluate() syncs into with a sharded optimizer (nor
      // its gather after the step): a known difference (docs/search.md, "The objective").
      if (t.sync_weight > 0) s += t.sync_weight * tb.time_s(k.in_grad_state[q], store);
      return s;
    }
  }
  return 0;
}

}  // namespace autoddl::search
