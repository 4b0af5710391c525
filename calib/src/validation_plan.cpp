// Per-rank validation programs (see validation_plan.hpp): a replay of the IterationPlan that
// costmodel::evaluate records, as the simulator's lowering (sim/src/lowering/lower.cpp) replays
// it. Everything the model charged comes from that plan item by item: per-op seconds, each
// input's boxing steps (only where charged), the stage-boundary sends, the gradient buckets as
// fused, the optimizer step. What is the runner's own lives here: the local GEMM shapes the
// signatures give, the rank groups of each mesh dim, and the order of each rank's steps.
//
// Order. Each stage runs its units (the forward or backward of one model chunk on one
// micro-batch) in its pipeline schedule's order (costmodel/pipeline_schedule.hpp). A unit
// receives what it reads from other stages at its start and sends what it produced at its
// end (Megatron-LM's p2p at unit boundaries). NCCL send/recv block their stream until the peer
// is at the matching call, so the stages' lists are merged into one global sequence, each
// rank's list being a subsequence of it: a stage's compute and collectives go as soon as it
// reaches them; a transfer goes when both its sender and its receiver are in a run of
// transfers (no compute between) that holds it. Within a run the order is free (the tensors
// were produced before it and are read after it), which is what lets 1F1B's "send this
// forward, receive that backward gradient" pairs meet, as Megatron's batched isend/irecv do;
// interleaved schedules also need a recv moved up into the receiver's current run (merge()).
#include "autoddl/calib/validation_plan.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

#include "autoddl/costmodel/compute.hpp"
#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/iteration_plan.hpp"
#include "autoddl/costmodel/op_registry.hpp"
#include "autoddl/costmodel/pipeline_schedule.hpp"

namespace autoddl::calib {

using namespace costmodel;

namespace {

Shape local_shape(const Shape& s, const NdSbp& sbp, const int* mesh) {
  Shape l = s;
  for (size_t a = 0; a < l.size(); ++a) l[a] /= split_factor(sbp, mesh, static_cast<int>(a));
  return l;
}

PlanStep gemm_step(const std::string& what, DType dt, int64_t m, int64_t n, int64_t k, int64_t batch,
                   double bytes) {
  PlanStep s;
  s.kind = StepKind::gemm;
  s.what = what;
  s.dtype = std::string(dtype_name(dt));
  s.m = m, s.n = n, s.k = k, s.batch = batch;
  s.flops = 2.0 * double(batch) * double(m) * double(n) * double(k);
  s.bytes = bytes;
  return s;
}

PlanStep memory_step(const std::string& what, DType dt, double flops, double bytes, int kernels) {
  PlanStep s;
  s.kind = StepKind::memory;
  s.what = what;
  s.dtype = std::string(dtype_name(dt));
  s.flops = flops;
  s.bytes = bytes;
  s.kernels = kernels;
  return s;
}

// The GEMMs of one matmul or conv on this rank's local shapes: forward, then dgrad and wgrad
// for the inputs that need a gradient.
void gemm_steps(const Graph& g, const Op& op, const OpSignature& sig, const std::vector<Shape>& shape_mb,
                const int* mesh, DType dt, std::vector<PlanStep>& fwd, std::vector<PlanStep>& bwd) {
  const double e = static_cast<double>(dtype_bytes(dt));
  const bool grad_a = g.tensors[op.inputs[0]].needs_gradient();
  const bool grad_b = g.tensors[op.inputs[1]].needs_gradient();
  if (const auto gemm_dims = op_kind_info(op.kind).gemm_dims) {
    const GemmDims d = gemm_dims(local_shape(shape_mb[op.inputs[0]], sig.in[0], mesh),
                                 local_shape(shape_mb[op.inputs[1]], sig.in[1], mesh), op.attrs);
    const int64_t batch = d.batch, m = d.m, n = d.n, k = d.k;
    const double bytes = e * double(batch) * double(m * k + k * n + m * n);
    fwd.push_back(gemm_step("fwd", dt, m, n, k, batch, bytes));
    if (grad_a) bwd.push_back(gemm_step("dgrad", dt, m, k, n, batch, bytes));   // dA = dC·Bᵀ
    if (grad_b) bwd.push_back(gemm_step("wgrad", dt, k, n, m, batch, bytes));   // dB = Aᵀ·dC
    return;
  }
  // conv2d as an implicit GEMM: M = N·P·Q output pixels, N = K filters, K = C·R·S.
  Shape x = local_shape(shape_mb[op.inputs[0]], sig.in[0], mesh);
  Shape w = local_shape(shape_mb[op.inputs[1]], sig.in[1], mesh);
  Shape y = local_shape(shape_mb[op.outputs[0]], sig.out[0], mesh);
  ConvGeometry c{x[0], x[1], x[2], x[3], w[0], w[2], w[3], y[2], y[3], op.attrs.stride, op.attrs.pad};
  const int64_t pix = c.n * c.p * c.q, crs = c.c * c.r * c.s;
  const double bytes = e * double(c.n * c.c * c.h * c.w + c.k * crs + pix * c.k);
  fwd.push_back(gemm_step("fwd", dt, pix, c.k, crs, 1, bytes));
  if (grad_a) bwd.push_back(gemm_step("dgrad", dt, pix, crs, c.k, 1, bytes));
  if (grad_b) bwd.push_back(gemm_step("wgrad", dt, c.k, crs, pix, 1, bytes));
  for (auto* pass : {&fwd, &bwd}) {
    for (PlanStep& s : *pass) s.conv = c;
  }
}

// One entry of a stage's list, for every rank of the stage: compute, a collective (on each
// rank's group of `sbp_dim`), or one side of a transfer with the same SBP position of
// `peer_stage`.
struct Item {
  enum Type : uint8_t { local, send, recv } type = local;
  int sbp_dim = -1;
  int peer_stage = -1;
  uint64_t transfer = 0;  // send, recv: which tensor or gradient, which micro-batch
  PlanStep step;
};

class Builder {
 public:
  Builder(const Graph& g, const ClusterSpec& cluster, const Scheme& scheme, const IterationPlan& ip, PlanBuild& out)
      : g_(g), cluster_(cluster), scheme_(scheme), ip_(ip), plan_(out.plan), report_(out.report) {}

  void run() {
    header();
    ranks_and_groups();
    compute_steps();
    chunks();
    for (int s = 0; s < S_; ++s) {
      for (const WorkUnit& u : order_[s]) {
        if (u.forward) forward_unit(s, u.chunk, u.micro_batch);
        else backward_unit(s, u.chunk, u.micro_batch);
      }
      AUTODDL_CHECK(next_bucket_[s] == ip_.buckets[s].size()) << "gradient bucket never issued on stage " << s;
      optimizer(s);
    }
    merge();
  }

 private:
  struct Edge {
    int op, k;  // a consumer and its input slot
  };

  void header() {
    S_ = ip_.stages;
    m_ = ip_.micro_batches;
    plan_.model = g_.name;
    plan_.cluster = cluster_.name;
    plan_.scheme = scheme_.name;
    plan_.gpu = cluster_.gpu.name;
    plan_.mesh_shape = scheme_.mesh_shape;
    plan_.pipeline_dim = ip_.pipeline_dim;
    plan_.stages = S_;
    plan_.micro_batches = m_;
    plan_.iteration_s = report_.iteration_s;
    plan_.compute_s = report_.compute_s;
    plan_.comm_exposed_s = report_.comm_exposed_s;
    plan_.grad_sync_s = report_.grad_sync_s;
    plan_.bubble_s = report_.bubble_s;
    for (const CollectiveInfo& k : collective_kinds()) {
      plan_.count_by_kind.emplace_back(std::string(k.name), report_.comm.count[static_cast<size_t>(k.kind)]);
    }
    for (const OpCostRow& row : report_.per_op) {
      const Op& op = g_.ops[plan_.ops.size()];
      plan_.ops.push_back({row.op, std::string(op_kind_info(op.kind).name), row.signature, row.stage,
                           row.compute_s, row.boxing_s, row.grad_sync_s});
    }
  }

  // Ranks are row-major over the whole mesh; a group is the ranks that differ only on one
  // mesh dim, numbered in order of first use.
  void ranks_and_groups() {
    const std::vector<int>& shape = scheme_.mesh_shape;
    const int nd = static_cast<int>(shape.size());
    stride_.assign(nd, 1);
    for (int d = nd - 2; d >= 0; --d) stride_[d] = stride_[d + 1] * shape[d + 1];
    stage_ranks_.assign(S_, {});
    for (int r = 0; r < ip_.mesh.devices(); ++r) {
      RankProgram rp;
      rp.rank = r;
      for (int d = 0; d < nd; ++d) rp.coords.push_back(r / stride_[d] % shape[d]);
      rp.stage = ip_.pipeline_dim < 0 ? 0 : rp.coords[ip_.pipeline_dim];
      stage_ranks_[rp.stage].push_back(r);
      plan_.ranks.push_back(std::move(rp));
    }
    mesh_dim_of_sbp_.assign(ip_.sbp_mesh.ndims(), -1);
    for (int d = 0; d < nd; ++d) {
      if (ip_.sbp_dim_of_mesh[d] >= 0) mesh_dim_of_sbp_[ip_.sbp_dim_of_mesh[d]] = d;
    }
  }

  int group_of(int rank, int mesh_dim) {
    AUTODDL_CHECK(mesh_dim >= 0) << "a collective on the placeholder SBP dim of a mesh with no SBP dims";
    std::vector<int> members;
    const int base = rank - plan_.ranks[rank].coords[mesh_dim] * stride_[mesh_dim];
    for (int c = 0; c < scheme_.mesh_shape[mesh_dim]; ++c) members.push_back(base + c * stride_[mesh_dim]);
    auto [it, fresh] = group_ids_.try_emplace({mesh_dim, members}, static_cast<int>(plan_.groups.size()));
    if (fresh) plan_.groups.push_back({mesh_dim, std::move(members)});
    return it->second;
  }

  int peer_in_stage(int rank, int stage) const {
    const int pd = ip_.pipeline_dim;
    return rank + (stage - plan_.ranks[rank].coords[pd]) * stride_[pd];
  }

  // Per op, one micro-batch: the forward and backward compute steps with the model's seconds
  // per pass (a pass's GEMMs share it in proportion to each one's own roofline time).
  void compute_steps() {
    const int n_ops = static_cast<int>(g_.ops.size());
    std::vector<Shape> shape_mb(g_.tensors.size());
    for (size_t t = 0; t < g_.tensors.size(); ++t) shape_mb[t] = micro_batch_shape(g_.tensors[t], m_);
    const std::vector<int> sbp_shape = ip_.sbp_mesh.shape();
    fwd_.assign(n_ops, {});
    bwd_.assign(n_ops, {});
    for (int i = 0; i < n_ops; ++i) {
      const Op& op = g_.ops[i];
      const OpSignature& sig = scheme_.op_sigs[i];
      const PlannedOp& po = ip_.ops[i];
      const DType dt = g_.tensors[op.outputs.empty() ? op.inputs[0] : op.outputs[0]].dtype;
      // Per device and micro-batch: the op's share of its whole-batch work (cost_model.hpp).
      const double share = micro_batch_work_share(g_, op, m_) / sig.compute_split;
      std::vector<PlanStep>& fwd = fwd_[i];
      std::vector<PlanStep>& bwd = bwd_[i];
      if (op_kind_info(op.kind).gemm_dims || op.kind == OpKind::conv2d) {
        gemm_steps(g_, op, sig, shape_mb, sbp_shape.data(), dt, fwd, bwd);
      } else {
        fwd.push_back(memory_step("fwd", dt, op.work.fwd_flops * share, op.work.fwd_bytes * share, 1));
      }
      if (bwd.empty()) {
        bwd.push_back(memory_step("bwd", dt, op.work.bwd_flops * share, op.work.bwd_bytes * share, 2));
      }
      fwd[0].predicted_s = po.fwd_s;
      double weight = 0;
      for (const PlanStep& s : bwd) weight += kernel_time_s(cluster_.gpu, op.kind, dt, s.flops, s.bytes, 1);
      for (PlanStep& s : bwd) {
        s.predicted_s = weight > 0 ? po.bwd_s * kernel_time_s(cluster_.gpu, op.kind, dt, s.flops, s.bytes, 1) / weight : 0;
      }
      if (po.recompute) {
        PlanStep r = fwd[0];
        r.what = "recompute";
        r.predicted_s = po.recompute_s;
        bwd.insert(bwd.begin(), r);
      }
      for (PlanStep& s : fwd) s.phase = StepPhase::fwd, s.op = i;
      for (PlanStep& s : bwd) s.phase = StepPhase::bwd, s.op = i;
    }
  }

  // Model chunks (one per stage without interleaving), their ops, the consumers each op sends
  // to, and each stage's unit order; as the simulator's lowering reads them.
  void chunks() {
    const int n_ops = static_cast<int>(ip_.ops.size());
    op_chunk_.assign(n_ops, 0);
    int n_chunks = 1;
    for (int i = 0; i < n_ops; ++i) {
      op_chunk_[i] = S_ > 1 ? ip_.ops[i].chunk : 0;
      n_chunks = std::max(n_chunks, op_chunk_[i] + 1);
    }
    const int v = (n_chunks + S_ - 1) / S_;
    chunk_ops_.assign(v * S_, {});
    cross_consumers_.assign(n_ops, {});
    for (int i = 0; i < n_ops; ++i) {
      chunk_ops_[op_chunk_[i]].push_back(i);
      const std::vector<PlannedInput>& ins = ip_.ops[i].inputs;
      for (int k = 0; k < static_cast<int>(ins.size()); ++k) {
        if (ins[k].cross_stage) cross_consumers_[ins[k].producer].push_back({i, k});
      }
    }
    order_.assign(S_, {});
    last_bwd_mb_.assign(v * S_, -1);
    for (int s = 0; s < S_; ++s) {
      order_[s] = stage_schedule(ip_.schedule, S_, v, s, m_);
      for (const WorkUnit& u : order_[s]) {
        if (!u.forward) last_bwd_mb_[u.chunk] = u.micro_batch;
      }
    }
    lists_.assign(S_, {});
    grads_done_.assign(n_ops, 0);
    next_bucket_.assign(S_, 0);
  }

  // ---- a stage's list ----

  void local(int s, PlanStep st, int mb) {
    st.micro_batch = mb;
    lists_[s].push_back({Item::local, -1, -1, 0, std::move(st)});
  }

  void collectives(int s, const std::vector<BoxingStep>& steps, StepPhase phase, int op, int mb, const std::string& what,
                   DType dt) {
    for (const BoxingStep& b : steps) {
      PlanStep st;
      st.kind = StepKind::collective;
      st.phase = phase;
      st.op = op;
      st.micro_batch = mb;
      st.what = what;
      st.dtype = std::string(dtype_name(dt));
      st.collective = std::string(collective_info(b.kind).name);
      st.bytes = b.bytes;
      st.predicted_s = b.time_s;
      lists_[s].push_back({Item::local, b.dim, -1, 0, std::move(st)});
    }
  }

  uint64_t transfer_key(bool forward, int op, int k, int mb) const {
    return ((static_cast<uint64_t>(op) * kMaxOpInputs + static_cast<uint64_t>(k)) * static_cast<uint64_t>(m_) +
            static_cast<uint64_t>(mb)) * 2 + (forward ? 1 : 0);
  }

  // One side of the transfer of consumer `op`'s input k (its gradient when backward).
  void transfer(int s, Item::Type type, int peer_stage, bool forward, int op, int k, int mb) {
    const PlannedInput& in = ip_.ops[op].inputs[k];
    const Tensor& t = g_.tensors[in.tensor];
    PlanStep st;
    st.kind = type == Item::send ? StepKind::send : StepKind::recv;
    st.phase = forward ? StepPhase::fwd : StepPhase::bwd;
    st.op = op;
    st.micro_batch = mb;
    st.what = std::string(type == Item::send ? "send " : "recv ") + (forward ? "" : "grad ") + t.name;
    st.dtype = std::string(dtype_name(t.dtype));
    st.bytes = forward ? in.fwd_send_bytes : in.bwd_send_bytes;
    st.predicted_s = forward ? in.fwd_send_s : in.bwd_send_s;
    lists_[s].push_back({type, -1, peer_stage, transfer_key(forward, op, k, mb), std::move(st)});
  }

  const std::string& name(int tensor) const { return g_.tensors[tensor].name; }
  DType dtype(int tensor) const { return g_.tensors[tensor].dtype; }

  void forward_unit(int s, int c, int mb) {
    for (int op : chunk_ops_[c]) {
      const std::vector<PlannedInput>& ins = ip_.ops[op].inputs;
      for (int k = 0; k < static_cast<int>(ins.size()); ++k) {
        if (!ins[k].cross_stage) continue;
        transfer(s, Item::recv, ip_.ops[ins[k].producer].stage, true, op, k, mb);
        // Scatter/gather: the received shares are all-gathered over the replicated dims.
        collectives(s, ins[k].fwd_send_gather, StepPhase::fwd, op, mb, "gather recv " + name(ins[k].tensor),
                    dtype(ins[k].tensor));
      }
    }
    for (int op : chunk_ops_[c]) {
      for (const PlannedInput& in : ip_.ops[op].inputs) {
        if (in.role == InputRole::parameter) {
          collectives(s, in.fwd, StepPhase::fwd, op, mb, "gather " + name(in.tensor), dtype(in.tensor));
        } else if (in.role == InputRole::activation) {
          collectives(s, in.fwd, StepPhase::fwd, op, mb, "boxing " + name(in.tensor), dtype(in.tensor));
        }
      }
      for (const PlanStep& st : fwd_[op]) local(s, st, mb);
    }
    for (int op : chunk_ops_[c]) {
      for (const Edge& e : cross_consumers_[op]) transfer(s, Item::send, ip_.ops[e.op].stage, true, e.op, e.k, mb);
    }
  }

  void backward_unit(int s, int c, int mb) {
    const std::vector<int>& ops = chunk_ops_[c];
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
      for (const Edge& e : cross_consumers_[*it]) {
        const PlannedInput& in = ip_.ops[e.op].inputs[e.k];
        if (!in.bwd_send) continue;
        transfer(s, Item::recv, ip_.ops[e.op].stage, false, e.op, e.k, mb);
        collectives(s, in.bwd_send_gather, StepPhase::bwd, *it, mb, "gather recv grad " + name(in.tensor),
                    dtype(in.tensor));
      }
    }
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
      const int op = *it;
      const std::vector<PlannedInput>& ins = ip_.ops[op].inputs;
      for (const PlannedInput& in : ins) {
        if (in.role == InputRole::parameter) {
          collectives(s, in.bwd, StepPhase::bwd, op, mb, "regather " + name(in.tensor), dtype(in.tensor));
        }
      }
      if (ip_.ops[op].recompute) {  // the forward re-runs from the checkpoint, collectives included
        for (const PlannedInput& in : ins) {
          if (in.role == InputRole::activation) {
            collectives(s, in.fwd, StepPhase::bwd, op, mb, "recompute " + name(in.tensor), dtype(in.tensor));
          }
        }
      }
      for (const PlanStep& st : bwd_[op]) local(s, st, mb);
      for (const PlannedInput& in : ins) {
        if (in.role == InputRole::activation) {
          collectives(s, in.bwd, StepPhase::bwd, op, mb, "grad " + name(in.tensor), dtype(in.tensor));
        }
      }
      if (last_bwd_mb_[c] == mb) {
        grads_done_[op] = 1;
        buckets(s, mb);
      }
    }
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
      const std::vector<PlannedInput>& ins = ip_.ops[*it].inputs;
      for (int k = 0; k < static_cast<int>(ins.size()); ++k) {
        if (ins[k].bwd_send) transfer(s, Item::send, ip_.ops[ins[k].producer].stage, false, *it, k, mb);
      }
    }
  }

  // The stage's buckets, in the model's order, each once the last backward of every op whose
  // gradient it holds is done; on the comm stream.
  void buckets(int s, int mb) {
    const std::vector<PlannedBucket>& bs = ip_.buckets[s];
    size_t& next = next_bucket_[s];
    while (next < bs.size()) {
      const PlannedBucket& b = bs[next];
      double bytes = 0;
      for (const PlannedGradient& gr : b.grads) {
        if (!grads_done_[gr.op]) return;
        bytes += gr.bytes;
      }
      const int index = static_cast<int>(next);
      char what[96];
      std::snprintf(what, sizeof what, "bucket %d (%zu gradients, %.3g MB)", index, b.grads.size(), bytes / 1e6);
      const size_t first = lists_[s].size();
      collectives(s, b.steps, StepPhase::grad_sync, -1, mb, what, dtype(b.grads[0].tensor));
      for (size_t x = first; x < lists_[s].size(); ++x) {
        lists_[s][x].step.comm_stream = true;
        lists_[s][x].step.bucket = index;
      }
      ++next;
    }
  }

  void optimizer(int s) {
    const double params = ip_.optimizer_params[s];
    if (params <= 0) return;
    PlanStep st = memory_step("adam", ip_.train_dtype, 0, optimizer_step_bytes(params, ip_.train_dtype), 1);
    st.phase = StepPhase::optimizer;
    st.predicted_s = ip_.optimizer_s[s];
    local(s, std::move(st), m_ - 1);
  }

  // ---- the global sequence ----

  void give(int s, const Item& it) {
    for (int r : stage_ranks_[s]) {
      PlanStep st = it.step;
      if (st.kind == StepKind::collective) st.group = group_of(r, mesh_dim_of_sbp_[it.sbp_dim]);
      plan_.ranks[r].steps.push_back(std::move(st));
    }
  }

  void give_transfer(int from, const Item& send, int to, const Item& recv) {
    for (int r : stage_ranks_[from]) {
      const int peer = peer_in_stage(r, to);
      PlanStep a = send.step, b = recv.step;
      a.group = b.group = group_of(r, ip_.pipeline_dim);
      a.peer = peer, b.peer = r;
      plan_.ranks[r].steps.push_back(std::move(a));
      plan_.ranks[peer].steps.push_back(std::move(b));
    }
  }

  // The stages' lists as one global sequence (see the top of the file): compute and
  // collectives as soon as a stage reaches them; then a transfer whose sender and receiver
  // both hold it in their current run of transfers; failing that, a send in its sender's run
  // whose recv the receiver does earlier than its list says (a recv needs nothing but a
  // buffer: the interleaved schedule's exchanges fetch the next units' inputs this way).
  void merge() {
    head_.assign(S_, 0);
    done_.assign(S_, {});
    size_t left = 0;
    for (int s = 0; s < S_; ++s) {
      done_[s].assign(lists_[s].size(), 0);
      left += lists_[s].size();
    }
    while (left > 0) {
      size_t given = 0;
      for (int s = 0; s < S_; ++s) {
        for (size_t& h = head_[s]; h < lists_[s].size() && (done_[s][h] || lists_[s][h].type == Item::local); ++h) {
          if (!done_[s][h]) give(s, lists_[s][h]), ++given;
        }
      }
      if (given == 0 && !match(false) && !match(true)) {
        std::string waits;
        for (int s = 0; s < S_; ++s) {
          if (head_[s] < lists_[s].size()) waits += " stage " + std::to_string(s) + ": " + lists_[s][head_[s]].step.what + ";";
        }
        throw InputError("scheme", "op_chunk",
                         "the pipeline cannot run in its schedule's order: every stage waits for a transfer its "
                         "peer makes later (" + waits.substr(1, waits.size() - 2) +
                             "); chunks must follow the op order, and an interleaved schedule may need "
                             "micro-batches a multiple of the stages");
      }
      left -= given ? given : 2;
    }
  }

  // Gives one transfer found as merge() says; false if there is none.
  bool match(bool hoist_recv) {
    for (int s = 0; s < S_; ++s) {
      for (size_t x = head_[s]; x < lists_[s].size() && lists_[s][x].type != Item::local; ++x) {
        const Item& a = lists_[s][x];
        if (done_[s][x] || (hoist_recv && a.type != Item::send)) continue;
        const int t = a.peer_stage;
        for (size_t y = head_[t]; y < lists_[t].size(); ++y) {
          const Item& b = lists_[t][y];
          if (!hoist_recv && b.type == Item::local) break;
          if (done_[t][y] || b.transfer != a.transfer || b.type == a.type || b.peer_stage != s) continue;
          if (a.type == Item::send) give_transfer(s, a, t, b);
          else give_transfer(t, b, s, a);
          done_[s][x] = done_[t][y] = 1;
          return true;
        }
      }
    }
    return false;
  }

  const Graph& g_;
  const ClusterSpec& cluster_;
  const Scheme& scheme_;
  const IterationPlan& ip_;
  ValidationPlan& plan_;
  const CostReport& report_;
  int S_ = 1, m_ = 1;
  std::vector<int> stride_;                     // per mesh dim, in rank ids
  std::vector<std::vector<int>> stage_ranks_;   // per stage
  std::vector<int> mesh_dim_of_sbp_;            // per SBP dim; -1: the placeholder of a pure pipeline
  std::map<std::pair<int, std::vector<int>>, int> group_ids_;
  std::vector<std::vector<PlanStep>> fwd_, bwd_;  // per op: compute steps of one micro-batch
  std::vector<int> op_chunk_;
  std::vector<std::vector<int>> chunk_ops_;
  std::vector<std::vector<Edge>> cross_consumers_;  // per producer: the readers it sends to
  std::vector<std::vector<WorkUnit>> order_;        // per stage
  std::vector<int> last_bwd_mb_;                    // per chunk
  std::vector<char> grads_done_;                    // per op: its last backward is in the list
  std::vector<size_t> next_bucket_;                 // per stage
  std::vector<std::vector<Item>> lists_;            // per stage
  std::vector<size_t> head_;                        // merge(): per stage, the first item not given
  std::vector<std::vector<char>> done_;             // merge(): per stage and item, given
};

// The runner replays every memory-bound op as a copy of its bytes (validate_rank.cu), which
// streams; the GPU's slower norm, loss and optimizer rates are those of the real kernels
// (calib/gpu/torch_nongemm_bench.py), so the runner's plan is priced without them.
ClusterSpec as_replayed(ClusterSpec c) {
  c.gpu.norm_fwd_rate = c.gpu.norm_bwd_rate = 0;
  c.gpu.loss_fwd_rate = c.gpu.loss_bwd_rate = 0;
  c.gpu.optimizer_rate = 0;
  return c;
}

}  // namespace

PlanBuild make_validation_plan(const Graph& graph, const ClusterSpec& cluster, const Scheme& scheme) {
  PlanBuild out;
  IterationPlan ip;
  const ClusterSpec replayed = as_replayed(cluster);
  out.report = evaluate(graph, replayed, scheme, &ip);  // validates the scheme against graph and mesh
  Builder(graph, replayed, scheme, ip, out).run();
  return out;
}

}  // namespace autoddl::calib
