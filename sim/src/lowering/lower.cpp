// Scheme → Program (see lowering.hpp). evaluate() fills an IterationPlan; this file replays it:
// each stage walks its schedule's units, and each unit emits, per computing device of the
// stage, the same ops (SPMD), so per-device bookkeeping is only "the last compute" and "what
// the next compute must wait for". Units are emitted by sweeping the stages and emitting every
// unit whose inputs (sends from other stages) already exist, so dependencies always point to
// earlier tasks; a stream's order is its stage's schedule order. (One class of ~600 lines: every
// emission step reads and updates the same per-stage state, so splitting it would only add a header.)
#include <algorithm>
#include <string>
#include <unordered_map>

#include "autoddl/costmodel/boxing_plan.hpp"
#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/pipeline_schedule.hpp"
#include "autoddl/sim/collectives.hpp"
#include "autoddl/sim/lowering.hpp"
#include "placement.hpp"

namespace autoddl::sim {

using costmodel::BoxingStep;
using costmodel::InputRole;
using costmodel::IterationPlan;
using costmodel::PlannedInput;
using costmodel::PlannedOp;
using costmodel::WorkUnit;

std::string_view lowering_mode_name(LoweringMode m) {
  switch (m) {
    case LoweringMode::automatic: return "auto";
    case LoweringMode::on: return "on";
    case LoweringMode::off: return "off";
  }
  return "auto";
}

bool parse_lowering_mode(std::string_view text, LoweringMode& out) {
  if (text == "auto") out = LoweringMode::automatic;
  else if (text == "on") out = LoweringMode::on;
  else if (text == "off") out = LoweringMode::off;
  else return false;
  return true;
}

int LoweredProgram::computing_devices() const {
  return static_cast<int>(std::count(computes.begin(), computes.end(), 1));
}

namespace lowering {
namespace {

struct Edge {
  int op;  // the consumer
  int k;   // its input slot
};

class Lowerer {
 public:
  Lowerer(const costmodel::Graph& g, const costmodel::Scheme& scheme, const costmodel::ClusterSpec& cluster,
          const IterationPlan& plan, const LoweringOptions& opt, LoweredProgram& out)
      : g_(g), plan_(plan), pl_(plan), out_(out), gpus_per_node_(cluster.gpus_per_node) {
    S_ = plan.stages;
    m_ = plan.micro_batches;
    n_ops_ = static_cast<int>(plan.ops.size());
    index_chunks();
    place_regathers(scheme);
    index_fsdp_layers();
    oversubscribed_ = cluster.nodes > 1 && cluster.inter.topology == "fat-tree" && cluster.inter.oversubscription > 1;
    choose_fold_and_merge(scheme, cluster.gpus_per_node, opt);
    choose_channels(cluster.inter.nics_per_node);
    color_pipeline_links();
  }

  void run() {
    // FSDP's prefetched parameter gathers get a stream of their own after the pipeline's, as
    // FSDP2 and Megatron-FSDP run them on their own CUDA stream beside the compute's collectives.
    param_stream_ = fsdp_ ? kFirstPipelineStream + links_colors_ : -1;
    out_.program = Program(pl_.devices(), kFirstPipelineStream + links_colors_ + (fsdp_ ? 1 : 0));
    prog_ = &out_.program;
    if (fsdp_) prog_->set_stream_name(param_stream_, "fsdp gather");
    prog_->set_stream_name(kBoxingStream, "boxing");
    prog_->set_stream_name(kGradSyncStream, "grad sync");
    for (int c = 0; c < links_colors_; ++c) prog_->set_stream_name(kFirstPipelineStream + c, "pipeline " + std::to_string(c));
    out_.device_stage.assign(static_cast<size_t>(pl_.devices()), 0);
    out_.computes.assign(static_cast<size_t>(pl_.devices()), 0);
    for (int s = 0; s < S_; ++s) {
      for (int pos = 0; pos < pl_.positions(); ++pos) {
        out_.device_stage[static_cast<size_t>(pl_.device(s, pos))] = s;
        out_.computes[static_cast<size_t>(pl_.device(s, pos))] = active_[static_cast<size_t>(pos)];
      }
    }
    state_.assign(static_cast<size_t>(S_), StageState{});
    for (StageState& st : state_) {
      st.last_compute.assign(active_pos_.size(), -1);
      st.pending.assign(active_pos_.size(), {});
      st.ahead.assign(active_pos_.size(), {});
      st.hiding_start.assign(active_pos_.size(), {});
      st.held.assign(active_pos_.size(), {});
      st.prefetched.assign(active_pos_.size(), {});
    }
    record_overlaps();
    emit_units();
    emit_buckets();
    emit_optimizer();
    emit_param_gathers();
  }

 private:
  struct Segment {
    bool open = false;
    double seconds = 0;
    Phase phase = Phase::none;
    int micro_batch = -1;
    int first_op = -1, last_op = -1, ops = 0;
    std::vector<int> record;  // ops whose gradients a bucket waits for
  };
  struct StageState {
    std::vector<TaskId> last_compute;          // per computing position
    std::vector<std::vector<TaskId>> pending;  // what the next compute waits for
    Segment seg;
    // tp_overlap, per computing position. `ahead`: hidden collectives emitted before the GEMM
    // pass they hide under (op ahead_op), which must not hold that GEMM back. While a GEMM pass
    // hides collectives (hiding_op >= 0): what it waited for (its start, where collectives
    // emitted after it begin), and the collectives the compute after it waits for (`held`).
    std::vector<std::vector<TaskId>> ahead, hiding_start, held;
    int ahead_op = -1, hiding_op = -1;
    bool ahead_fwd = true, hiding_fwd = true;
    // FSDP, per computing position: the gathers of layer `prefetched_layer` issued ahead, which
    // its first compute waits for (-1: none in flight).
    std::vector<std::vector<TaskId>> prefetched;
    int prefetched_layer = -1;
  };

  // ---- static structure --------------------------------------------------------------

  void index_chunks() {
    op_chunk_.assign(static_cast<size_t>(n_ops_), 0);
    int chunks = 1;
    for (int i = 0; i < n_ops_; ++i) {
      op_chunk_[static_cast<size_t>(i)] = S_ > 1 ? plan_.ops[static_cast<size_t>(i)].chunk : 0;
      chunks = std::max(chunks, op_chunk_[static_cast<size_t>(i)] + 1);
    }
    v_ = (chunks + S_ - 1) / S_;
    C_ = v_ * S_;
    chunk_ops_.assign(static_cast<size_t>(C_), {});
    fwd_in_.assign(static_cast<size_t>(C_), {});
    bwd_in_.assign(static_cast<size_t>(C_), {});
    cross_consumers_.assign(static_cast<size_t>(n_ops_), {});
    bucket_op_.assign(static_cast<size_t>(n_ops_), 0);
    for (int i = 0; i < n_ops_; ++i) {
      const int c = op_chunk_[static_cast<size_t>(i)];
      chunk_ops_[static_cast<size_t>(c)].push_back(i);
      const PlannedOp& po = plan_.ops[static_cast<size_t>(i)];
      for (int k = 0; k < static_cast<int>(po.inputs.size()); ++k) {
        const PlannedInput& in = po.inputs[static_cast<size_t>(k)];
        if (in.role != InputRole::activation) continue;
        const int pc = op_chunk_[static_cast<size_t>(in.producer)];
        if (pc != c) {
          add_unique(fwd_in_[static_cast<size_t>(c)], pc);
          add_unique(bwd_in_[static_cast<size_t>(pc)], c);
        }
        if (in.cross_stage) cross_consumers_[static_cast<size_t>(in.producer)].push_back({i, k});
      }
    }
    for (const auto& stage_buckets : plan_.buckets)
      for (const auto& b : stage_buckets)
        for (const auto& gr : b.grads) bucket_op_[static_cast<size_t>(gr.op)] = 1;
    order_.resize(static_cast<size_t>(S_));
    last_bwd_mb_.assign(static_cast<size_t>(C_), -1);
    for (int s = 0; s < S_; ++s) {
      order_[static_cast<size_t>(s)] = costmodel::stage_schedule(plan_.schedule, S_, v_, s, m_);
      for (const WorkUnit& u : order_[static_cast<size_t>(s)])
        if (!u.forward) last_bwd_mb_[static_cast<size_t>(u.chunk)] = u.micro_batch;
    }
  }

  // A weight GEMM input gathered again for the weight gradient (PlannedInput::bwd_regather) is
  // charged to its first reader, but evaluate() hides it under the data-gradient GEMMs of every
  // reader of that layout (Q, K and V read one gathered LayerNorm output): it is launched at
  // the first of their backwards, the last reader's, so it runs beside them all, as Megatron-LM
  // launches the async all-gather before the data gradient.
  void place_regathers(const costmodel::Scheme& scheme) {
    regather_at_.assign(static_cast<size_t>(n_ops_), {});
    for (int i = 0; i < n_ops_; ++i) {
      const PlannedOp& po = plan_.ops[static_cast<size_t>(i)];
      for (int k = 0; k < static_cast<int>(po.inputs.size()); ++k) {
        const PlannedInput& in = po.inputs[static_cast<size_t>(k)];
        if (in.bwd_regather.empty()) continue;
        const costmodel::NdSbp& layout = scheme.op_sigs[static_cast<size_t>(i)].in[static_cast<size_t>(k)];
        int launcher = i;
        for (int c : g_.consumers[static_cast<size_t>(in.tensor)]) {
          if (c > launcher && op_chunk_[static_cast<size_t>(c)] == op_chunk_[static_cast<size_t>(i)] &&
              costmodel::regather_reader(g_, scheme, c, in.tensor, layout))
            launcher = c;
        }
        regather_at_[static_cast<size_t>(launcher)].push_back({i, k});
      }
    }
  }

  // FSDP (IterationPlan::fsdp): each op's layer (costmodel::fsdp_layers, as evaluate() groups
  // them) and each layer's ops.
  void index_fsdp_layers() {
    fsdp_ = plan_.fsdp;
    if (!fsdp_) return;
    std::vector<int> stage(static_cast<size_t>(n_ops_));
    for (int i = 0; i < n_ops_; ++i) stage[static_cast<size_t>(i)] = plan_.ops[static_cast<size_t>(i)].stage;
    layer_ = costmodel::fsdp_layers(g_, stage);
    layer_ops_.assign(n_ops_ > 0 ? static_cast<size_t>(layer_.back()) + 1 : 0, {});
    for (int i = 0; i < n_ops_; ++i) layer_ops_[static_cast<size_t>(layer_[static_cast<size_t>(i)])].push_back(i);
  }

  static void add_unique(std::vector<int>& v, int x) {
    if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
  }

  // Data-parallel dims whose replicas sit on different nodes (every parameter used broadcast
  // on the dim, and its GPU stride a multiple of the node size) can be folded: only the
  // positions with coordinate 0 on them compute; the others ("mirrors") join the collectives
  // that span a folded dim (boxing on it, and gradient sync), which their representative's
  // tasks release. Under SPMD every position of a stage runs the same ops at the same time,
  // so the representative's timing is unchanged. A fold drops the mirrors' own traffic on the
  // other dims (their boxing and pipeline sends): it stays on their own nodes, so it shares
  // no NIC or port with the computing devices' traffic, only fabric links.
  void choose_fold_and_merge(const costmodel::Scheme& scheme, int gpus_per_node, const LoweringOptions& opt) {
    const int nd = pl_.sbp_dims();
    std::vector<char> data(static_cast<size_t>(nd), 0);
    for (int d = 0; d < plan_.mesh.ndims(); ++d) {
      const int sd = plan_.sbp_dim_of_mesh[static_cast<size_t>(d)];
      const costmodel::MeshDim& md = plan_.mesh.dims[static_cast<size_t>(d)];
      if (sd >= 0) data[static_cast<size_t>(sd)] = md.size > 1 && md.stride % gpus_per_node == 0;
    }
    size_t per_op_tasks = 0;
    for (int i = 0; i < n_ops_; ++i) {
      const PlannedOp& po = plan_.ops[static_cast<size_t>(i)];
      per_op_tasks += po.recompute_s > 0 ? 3 : 2;
      for (size_t k = 0; k < po.inputs.size(); ++k) {
        if (po.inputs[k].role != InputRole::parameter) continue;
        const costmodel::NdSbp& use = scheme.op_sigs[static_cast<size_t>(i)].in[k];
        for (int d = 0; d < nd && d < use.ndims; ++d)
          if (!use.dims[static_cast<size_t>(d)].is_broadcast()) data[static_cast<size_t>(d)] = 0;
      }
    }
    int replicas = 1;
    for (int d = 0; d < nd; ++d)
      if (data[static_cast<size_t>(d)]) replicas *= pl_.size(d);
    const size_t all_tasks = per_op_tasks * static_cast<size_t>(m_) * static_cast<size_t>(pl_.positions());
    // Automatic folding keeps the other replicas' traffic where the fabric can be contended.
    bool fold = opt.fold_replicas == LoweringMode::on ||
                (opt.fold_replicas == LoweringMode::automatic && all_tasks > opt.max_tasks && !oversubscribed_);
    if (replicas == 1) fold = false;
    const size_t tasks = fold ? all_tasks / static_cast<size_t>(replicas) : all_tasks;
    merge_ = opt.merge_compute == LoweringMode::on ||
             (opt.merge_compute == LoweringMode::automatic && tasks > opt.max_tasks);
    out_.merged = merge_;
    out_.replicas_folded = fold ? replicas : 1;
    folded_.assign(static_cast<size_t>(nd), 0);
    if (fold) {
      folded_ = data;
      for (int d = 0; d < plan_.mesh.ndims(); ++d) {
        const int sd = plan_.sbp_dim_of_mesh[static_cast<size_t>(d)];
        if (sd >= 0 && folded_[static_cast<size_t>(sd)]) out_.folded_mesh_dims.push_back(d);
      }
    }
    active_.assign(static_cast<size_t>(pl_.positions()), 1);
    index_.assign(static_cast<size_t>(pl_.positions()), -1);
    rep_index_.assign(static_cast<size_t>(pl_.positions()), -1);
    for (int pos = 0; pos < pl_.positions(); ++pos) {
      int rep = pos;
      for (int d = 0; d < nd; ++d)
        if (folded_[static_cast<size_t>(d)]) rep = pl_.with_coord(rep, d, 0);
      active_[static_cast<size_t>(pos)] = rep == pos;
      if (rep == pos) {
        index_[static_cast<size_t>(pos)] = static_cast<int>(active_pos_.size());
        active_pos_.push_back(pos);
      }
    }
    for (int pos = 0; pos < pl_.positions(); ++pos) {
      int rep = pos;
      for (int d = 0; d < nd; ++d)
        if (folded_[static_cast<size_t>(d)]) rep = pl_.with_coord(rep, d, 0);
      rep_index_[static_cast<size_t>(pos)] = index_[static_cast<size_t>(rep)];
    }
    // Boxing groups per SBP dim: among computing positions, or, on a folded dim, every group
    // (mirrors differing in another folded dim do the same step at the same time, and their
    // groups may share NICs with the representative's).
    const std::vector<char> all(static_cast<size_t>(pl_.positions()), 1);
    boxing_groups_.resize(static_cast<size_t>(nd));
    for (int d = 0; d < nd; ++d) boxing_groups_[static_cast<size_t>(d)] = pl_.groups(d, folded_[static_cast<size_t>(d)] ? all : active_);
  }

  // Flows per node-crossing ring edge of a collective on each SBP dim: the groups_per_node
  // groups of a dim that crosses nodes run at once (SPMD) and share the node's NICs, so each
  // gets nics/groups channels: the bandwidth costmodel's mesh tier gives it, with fewer flows.
  void choose_channels(int nics) {
    channels_.assign(static_cast<size_t>(pl_.sbp_dims()), 0);
    for (int d = 0; d < plan_.mesh.ndims(); ++d) {
      const int sd = plan_.sbp_dim_of_mesh[static_cast<size_t>(d)];
      const costmodel::MeshDim& md = plan_.mesh.dims[static_cast<size_t>(d)];
      if (sd >= 0 && md.crosses_nodes)
        channels_[static_cast<size_t>(sd)] = std::max(1, (nics + md.groups_per_node - 1) / md.groups_per_node);
    }
  }

  // Each (from stage, to stage) direction of pipeline traffic gets a stream; directions that
  // share a stage get different streams, so no send queues behind another link's.
  void color_pipeline_links() {
    std::vector<std::pair<int, int>> pairs;
    for (int i = 0; i < n_ops_; ++i) {
      const PlannedOp& po = plan_.ops[static_cast<size_t>(i)];
      for (const PlannedInput& in : po.inputs) {
        if (!in.cross_stage) continue;
        const int from = plan_.ops[static_cast<size_t>(in.producer)].stage;
        pairs.emplace_back(from, po.stage);
        if (in.bwd_send) pairs.emplace_back(po.stage, from);
      }
    }
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    links_colors_ = 0;
    auto clashes = [&](const std::pair<int, int>& p, int color) {
      for (const auto& [q, c] : link_color_) {
        const bool share = q.first == p.first || q.first == p.second || q.second == p.first || q.second == p.second;
        if (share && c == color) return true;
      }
      return false;
    };
    for (const auto& p : pairs) {
      int color = 0;
      while (clashes(p, color)) ++color;
      link_color_.emplace_back(p, color);
      links_colors_ = std::max(links_colors_, color + 1);
    }
  }

  int link_stream(int from, int to) const {
    for (const auto& [q, c] : link_color_)
      if (q.first == from && q.second == to) return kFirstPipelineStream + c;
    AUTODDL_CHECK(false) << "no pipeline stream for stages " << from << " -> " << to;
    return -1;
  }

  // ---- emission helpers --------------------------------------------------------------

  int device(int stage, int ai) const { return pl_.device(stage, active_pos_[static_cast<size_t>(ai)]); }

  TaskId add(Task t, double expected_s) {
    if (t.kind == TaskKind::collective) t.algo = runnable_algorithm(t.collective, t.algo, t.devices, gpus_per_node_);
    const TaskId id = prog_->add(std::move(t));
    out_.expected_s.push_back(expected_s);
    return id;
  }

  static std::vector<TaskId> unique(std::vector<TaskId> v) {
    v.erase(std::remove(v.begin(), v.end(), -1), v.end());
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  }

  void flush(int s) {
    StageState& st = state_[static_cast<size_t>(s)];
    Segment& seg = st.seg;
    if (!seg.open) return;
    std::string name = g_.ops[static_cast<size_t>(seg.first_op)].name;
    if (seg.ops > 1) name += " .. " + g_.ops[static_cast<size_t>(seg.last_op)].name;
    for (size_t ai = 0; ai < active_pos_.size(); ++ai) {
      Task t;
      t.kind = TaskKind::compute;
      t.phase = seg.phase;
      t.stream = kComputeStream;
      t.name = name;
      t.devices = {device(s, static_cast<int>(ai))};
      t.seconds = seg.seconds;
      t.deps = unique(std::move(st.pending[ai]));
      st.pending[ai].clear();
      t.micro_batch = seg.micro_batch;
      t.stage = s;
      const TaskId id = add(std::move(t), seg.seconds);
      st.last_compute[ai] = id;
      for (int op : seg.record) op_task_[static_cast<size_t>(op)][ai] = id;
    }
    seg = Segment{};
  }

  void compute(int s, int op, double seconds, Phase phase, int mb, bool record) {
    // A GEMM pass that hides collectives (tp_overlap) is a task of its own, which they run
    // beside; the compute after it first waits for them (release).
    const bool fwd = phase == Phase::forward;  // recompute opens the backward pass
    const bool hides = hides_collectives(op, fwd);
    StageState& st = state_[static_cast<size_t>(s)];
    if (st.hiding_op >= 0 && !(hides && st.hiding_op == op && st.hiding_fwd == fwd)) release(s);
    if (hides && st.hiding_op < 0) begin_hiding(s, op, fwd);
    else settle_ahead(s);
    Segment& seg = st.seg;
    // Runs merge only within one phase (recompute joins its backward).
    const Phase as = merge_ && phase == Phase::recompute ? Phase::backward : phase;
    if (seg.open && seg.phase != as) flush(s);
    if (!seg.open) {
      seg.open = true;
      seg.phase = as;
      seg.micro_batch = mb;
      seg.first_op = op;
    }
    seg.seconds += seconds;
    seg.last_op = op;
    ++seg.ops;
    if (record) {
      if (op_task_.empty()) op_task_.assign(static_cast<size_t>(n_ops_), {});
      op_task_[static_cast<size_t>(op)].assign(active_pos_.size(), -1);
      seg.record.push_back(op);
    }
    if (!merge_ || hides) flush(s);
  }

  // ---- tp_overlap and pp_overlap -----------------------------------------------------

  bool hides_collectives(int op, bool fwd) const {
    const PlannedOp& po = plan_.ops[static_cast<size_t>(op)];
    return fwd ? po.tp_fwd_hidden_s > 0 || po.tp_fwd_extra_s > 0 : po.tp_bwd_hidden_s > 0 || po.tp_bwd_extra_s > 0;
  }

  // Collectives emitted ahead of a GEMM that is not the next compute (an order the cost model
  // did not assume): the next compute waits for them, as for any boxing.
  void settle_ahead(int s) {
    StageState& st = state_[static_cast<size_t>(s)];
    if (st.ahead_op < 0) return;
    for (size_t ai = 0; ai < active_pos_.size(); ++ai) {
      auto& a = st.ahead[ai];
      st.pending[ai].insert(st.pending[ai].end(), a.begin(), a.end());
      a.clear();
    }
    st.ahead_op = -1;
  }

  // The GEMM pass `op` starts hiding collectives: those emitted ahead for it are held for the
  // compute after it; collectives emitted from now on start where the GEMM starts.
  void begin_hiding(int s, int op, bool fwd) {
    flush(s);
    StageState& st = state_[static_cast<size_t>(s)];
    const bool mine = st.ahead_op == op && st.ahead_fwd == fwd;
    if (!mine) settle_ahead(s);
    for (size_t ai = 0; ai < active_pos_.size(); ++ai) {
      st.hiding_start[ai] = st.pending[ai];
      st.hiding_start[ai].push_back(st.last_compute[ai]);
      st.held[ai].clear();
      if (mine) st.held[ai].swap(st.ahead[ai]);
    }
    if (mine) st.ahead_op = -1;
    st.hiding_op = op;
    st.hiding_fwd = fwd;
  }

  // The GEMM pass's hiding ends: what evaluate() charges after it (chunked GEMMs, userbuffers'
  // SMs) runs once both the GEMM and its hidden collectives are done, and the next compute
  // follows; without such a charge the next compute waits for the collectives itself.
  void release(int s) {
    StageState& st = state_[static_cast<size_t>(s)];
    if (st.hiding_op < 0) return;
    flush(s);
    const int op = st.hiding_op;
    const PlannedOp& po = plan_.ops[static_cast<size_t>(op)];
    const double extra_s = st.hiding_fwd ? po.tp_fwd_extra_s : po.tp_bwd_extra_s;
    const int mb = prog_->task(st.last_compute[0]).micro_batch;  // the GEMM's
    for (size_t ai = 0; ai < active_pos_.size(); ++ai) {
      if (extra_s > 0) {
        Task t;
        t.kind = TaskKind::compute;
        t.phase = st.hiding_fwd ? Phase::forward : Phase::backward;
        t.overlap = Overlap::tp;  // reported with the boxing, as costmodel reports it
        t.stream = kComputeStream;
        t.name = "tp chunks " + g_.ops[static_cast<size_t>(op)].name;
        t.devices = {device(s, static_cast<int>(ai))};
        t.seconds = extra_s;
        t.deps = unique(std::move(st.held[ai]));
        t.micro_batch = mb;
        t.stage = s;
        st.last_compute[ai] = add(std::move(t), extra_s);
      } else {
        st.pending[ai].insert(st.pending[ai].end(), st.held[ai].begin(), st.held[ai].end());
      }
      st.held[ai].clear();
      st.hiding_start[ai].clear();
    }
    st.hiding_op = -1;
  }

  // Ends a unit's tp_overlap bookkeeping: nothing hides across units.
  void finish_unit(int s) {
    flush(s);
    release(s);
    settle_ahead(s);
  }

  // pp_overlap: what the SMs of the overlapped sends' NCCL kernels cost a micro-batch's
  // forward on stage s (evaluate() charges it per micro-batch; a stage runs v forward units).
  void p2p_contention(int s, int mb) {
    if (plan_.p2p_contention_s.empty()) return;
    const double seconds = plan_.p2p_contention_s[static_cast<size_t>(s)] / v_;
    if (seconds <= 0) return;
    finish_unit(s);
    StageState& st = state_[static_cast<size_t>(s)];
    for (size_t ai = 0; ai < active_pos_.size(); ++ai) {
      Task t;
      t.kind = TaskKind::compute;
      t.phase = Phase::forward;
      t.stream = kComputeStream;
      t.name = "p2p SM contention";
      t.devices = {device(s, static_cast<int>(ai))};
      t.seconds = seconds;
      t.deps = unique(std::move(st.pending[ai]));
      st.pending[ai].clear();
      t.micro_batch = mb;
      t.stage = s;
      st.last_compute[ai] = add(std::move(t), seconds);
    }
  }

  // What evaluate() hid per stage and iteration, for the report.
  void record_overlaps() {
    std::vector<double> tp_s(static_cast<size_t>(S_), 0);
    bool tp = false;
    for (const PlannedOp& po : plan_.ops) {
      tp = tp || po.tp_fwd_hidden_s > 0 || po.tp_bwd_hidden_s > 0 || po.tp_fwd_extra_s > 0 || po.tp_bwd_extra_s > 0;
      tp_s[static_cast<size_t>(po.stage)] += m_ * (po.tp_fwd_hidden_s + po.tp_bwd_hidden_s);
    }
    if (tp) out_.overlaps.push_back({Overlap::tp, std::move(tp_s)});
    if (!plan_.p2p_hidden_s.empty()) {
      std::vector<double> pp_s = plan_.p2p_hidden_s;
      for (double& x : pp_s) x *= m_;
      out_.overlaps.push_back({Overlap::pp, std::move(pp_s)});
    }
  }

  // The next compute of every computing device of stage s waits for `tasks` (one per device).
  void wait_for(int s, const std::vector<TaskId>& tasks) {
    flush(s);
    StageState& st = state_[static_cast<size_t>(s)];
    for (size_t ai = 0; ai < tasks.size(); ++ai) st.pending[ai].push_back(tasks[ai]);
  }

  // One group's collective for a step of a boxing path or a gradient bucket on stage s; the
  // caller adds the group's devices and dependencies.
  Task step_task(const BoxingStep& step, Phase phase, int stream, const std::string& name, int s) const {
    Task t;
    t.kind = TaskKind::collective;
    t.phase = phase;
    t.stream = stream;
    t.name = name;
    t.collective = step.kind;
    // The algorithm the step was priced with on its mesh dim (NCCL's pick, the fastest tier
    // formula, ...), recorded by the cost model; add() falls back to the kind's default where
    // the simulator lacks it.
    t.algo = step.algo;
    t.bytes = step.bytes;
    t.channels = channels_[static_cast<size_t>(step.dim)];
    t.stage = s;
    return t;
  }

  // A boxing path on stage s: each step one collective per group of its dim, after the compute
  // before it; the next compute waits for them. A mirror's part waits for its representative.
  // `waited`: the stage's next compute waits for the steps; a backward re-gather runs beside the
  // backward instead (on the boxing stream, after what the stage has done so far).
  // `hidden_under` (tp_overlap): the op whose GEMM pass (`fwd_pass`) the path hides under, -1
  // for none. Beside the GEMM pass now hiding: the steps start where that GEMM started and the
  // compute after it waits for them; ahead of a GEMM not yet run: they start after the compute
  // so far and the GEMM does not wait for them (begin_hiding holds them for the compute after).
  void boxing(int s, const std::vector<BoxingStep>& steps, const std::string& name, int mb, bool waited = true,
              int hidden_under = -1, bool fwd_pass = true) {
    if (steps.empty()) return;
    flush(s);
    StageState& st = state_[static_cast<size_t>(s)];
    const bool beside = hidden_under >= 0 && st.hiding_op == hidden_under && st.hiding_fwd == fwd_pass;
    const bool ahead = hidden_under >= 0 && !beside;
    // A collective for the next GEMM starts with it, after the last one's charge.
    if (ahead) release(s);
    if (ahead && !(st.ahead_op == hidden_under && st.ahead_fwd == fwd_pass)) {
      settle_ahead(s);
      st.ahead_op = hidden_under;
      st.ahead_fwd = fwd_pass;
    }
    std::vector<std::pair<int, TaskId>> added;  // (computing index, task): pending after the step
    std::vector<std::vector<TaskId>> chain;     // beside: per computing index, the previous step
    if (beside) chain.assign(active_pos_.size(), {});
    for (const BoxingStep& step : steps) {
      added.clear();
      for (const std::vector<int>& grp : boxing_groups_[static_cast<size_t>(step.dim)]) {
        Task t = step_task(step, Phase::boxing, kBoxingStream, name, s);
        t.micro_batch = mb;
        if (hidden_under >= 0) t.overlap = Overlap::tp;
        for (int pos : grp) {
          t.devices.push_back(pl_.device(s, pos));
          const auto ai = static_cast<size_t>(rep_index_[static_cast<size_t>(pos)]);  // itself, or its representative
          const auto& p = beside ? st.hiding_start[ai] : st.pending[ai];
          t.deps.insert(t.deps.end(), p.begin(), p.end());
          if (beside) t.deps.insert(t.deps.end(), chain[ai].begin(), chain[ai].end());
          else t.deps.push_back(st.last_compute[ai]);
        }
        t.deps = unique(std::move(t.deps));
        const TaskId id = add(std::move(t), step.time_s);
        for (int pos : grp)
          if (index_[static_cast<size_t>(pos)] >= 0) added.emplace_back(index_[static_cast<size_t>(pos)], id);
      }
      if (beside) {
        for (auto& c : chain) c.clear();
        for (const auto& [ai, id] : added) chain[static_cast<size_t>(ai)].push_back(id);
      }
      for (const auto& [ai, id] : added) {
        if (beside) st.held[static_cast<size_t>(ai)].push_back(id);
        else if (ahead) st.ahead[static_cast<size_t>(ai)].push_back(id);
        else if (waited) st.pending[static_cast<size_t>(ai)].push_back(id);
      }
    }
  }

  // FSDP: the parameter gathers of `layer`'s ops (forward: their `fwd` paths; backward: the
  // re-gathers, `bwd`) on the FSDP stream of stage s, after what the stage has done so far; per
  // computing position, the tasks a compute waits for to use them.
  std::vector<std::vector<TaskId>> fsdp_gathers(int s, int layer, bool fwd, int mb) {
    flush(s);
    StageState& st = state_[static_cast<size_t>(s)];
    std::vector<std::vector<TaskId>> done(active_pos_.size());
    std::vector<TaskId> prev(active_pos_.size(), -1);  // per computing position, the last gather
    for (int op : layer_ops_[static_cast<size_t>(layer)]) {
      for (const PlannedInput& in : plan_.ops[static_cast<size_t>(op)].inputs) {
        if (in.role != InputRole::parameter) continue;
        const std::string name = (fwd ? "fsdp gather " : "fsdp regather ") + tensor_name(in.tensor);
        for (const BoxingStep& step : fwd ? in.fwd : in.bwd) {
          std::vector<std::pair<size_t, TaskId>> added;
          for (const std::vector<int>& grp : boxing_groups_[static_cast<size_t>(step.dim)]) {
            Task t = step_task(step, Phase::boxing, param_stream_, name, s);
            t.micro_batch = mb;
            for (int pos : grp) {
              t.devices.push_back(pl_.device(s, pos));
              const auto ai = static_cast<size_t>(rep_index_[static_cast<size_t>(pos)]);
              t.deps.insert(t.deps.end(), st.pending[ai].begin(), st.pending[ai].end());
              t.deps.push_back(st.last_compute[ai]);
              t.deps.push_back(prev[ai]);
            }
            t.deps = unique(std::move(t.deps));
            const TaskId id = add(std::move(t), step.time_s);
            for (int pos : grp)
              if (index_[static_cast<size_t>(pos)] >= 0) added.emplace_back(static_cast<size_t>(index_[static_cast<size_t>(pos)]), id);
          }
          for (const auto& [ai, id] : added) {
            prev[ai] = id;
            done[ai].push_back(id);
          }
        }
      }
    }
    return done;
  }

  // FSDP: stage s enters `layer` (forward, or backward when !fwd) in chunk c: its next compute
  // waits for the layer's gathers, prefetched while the previous layer ran (or issued now, for
  // the first layer of the pass), and the gathers of the layer after it in this pass (the next
  // one forward, the previous one backward) are issued to run under this layer's compute.
  void fsdp_enter(int s, int c, int layer, bool fwd, int mb) {
    StageState& st = state_[static_cast<size_t>(s)];
    std::vector<std::vector<TaskId>> mine;
    if (st.prefetched_layer == layer) mine.swap(st.prefetched);
    else mine = fsdp_gathers(s, layer, fwd, mb);
    st.prefetched_layer = -1;
    st.prefetched.assign(active_pos_.size(), {});
    const int next = fwd ? layer + 1 : layer - 1;
    if (next >= 0 && next < static_cast<int>(layer_ops_.size()) &&
        op_chunk_[static_cast<size_t>(layer_ops_[static_cast<size_t>(next)].front())] == c) {
      st.prefetched = fsdp_gathers(s, next, fwd, mb);
      st.prefetched_layer = next;
    }
    for (size_t ai = 0; ai < active_pos_.size(); ++ai)
      st.pending[ai].insert(st.pending[ai].end(), mine[ai].begin(), mine[ai].end());
  }

  // FSDP: a pass ends; nothing prefetched crosses into the next unit (evaluate() prefetches
  // within a pass only).
  void fsdp_leave(int s) {
    StageState& st = state_[static_cast<size_t>(s)];
    st.prefetched_layer = -1;
    st.prefetched.assign(active_pos_.size(), {});
  }

  // Per computing position, a send of `bytes` from stage `from` to stage `to` after what
  // stage `from` has done so far (its last compute and the collectives since).
  std::vector<TaskId> send(int from, int to, double bytes, double expected_s, const std::string& name, int mb,
                           int label_stage) {
    finish_unit(from);  // a send carries what the stage has computed, hidden collectives included
    const StageState& st = state_[static_cast<size_t>(from)];
    std::vector<TaskId> ids(active_pos_.size());
    for (size_t ai = 0; ai < active_pos_.size(); ++ai) {
      Task t;
      t.kind = TaskKind::collective;
      t.phase = Phase::pipeline;
      t.stream = link_stream(from, to);
      t.overlap = plan_.p2p_hidden_s.empty() ? Overlap::none : Overlap::pp;
      t.name = name;
      t.collective = costmodel::CollectiveKind::send_recv;
      t.algo = CollectiveAlgo::direct;
      t.bytes = bytes;
      t.devices = {device(from, static_cast<int>(ai)), device(to, static_cast<int>(ai))};
      t.deps = st.pending[ai];
      t.deps.push_back(st.last_compute[ai]);
      t.deps = unique(std::move(t.deps));
      t.micro_batch = mb;
      t.stage = label_stage;
      ids[ai] = add(std::move(t), expected_s);
    }
    return ids;
  }

  uint64_t key(bool forward, int op, int k, int mb) const {
    return ((static_cast<uint64_t>(op) * costmodel::kMaxOpInputs + static_cast<uint64_t>(k)) *
                static_cast<uint64_t>(m_) + static_cast<uint64_t>(mb)) * 2 + (forward ? 1 : 0);
  }

  std::vector<TaskId> take_sent(bool forward, int op, int k, int mb) {
    auto it = sent_.find(key(forward, op, k, mb));
    AUTODDL_CHECK(it != sent_.end()) << "pipeline send of op " << op << " input " << k << " micro-batch " << mb
                                     << " not emitted before its receiver";
    std::vector<TaskId> v = std::move(it->second);
    sent_.erase(it);
    return v;
  }

  const std::string& tensor_name(int t) const { return g_.tensors[static_cast<size_t>(t)].name; }

  // ---- units ----------------------------------------------------------------------------

  void forward_unit(int s, int c, int mb) {
    int layer = -1;
    for (int op : chunk_ops_[static_cast<size_t>(c)]) {
      const PlannedOp& po = plan_.ops[static_cast<size_t>(op)];
      if (fsdp_ && layer_[static_cast<size_t>(op)] != layer) {
        layer = layer_[static_cast<size_t>(op)];
        fsdp_enter(s, c, layer, true, mb);
      }
      for (int k = 0; k < static_cast<int>(po.inputs.size()); ++k) {
        const PlannedInput& in = po.inputs[static_cast<size_t>(k)];
        if (in.role == InputRole::parameter) {
          if (!fsdp_) boxing(s, in.fwd, "gather " + tensor_name(in.tensor), mb);
        } else if (in.role == InputRole::activation) {
          if (in.cross_stage) {
            wait_for(s, take_sent(true, op, k, mb));
            boxing(s, in.fwd_send_gather, "gather recv " + tensor_name(in.tensor), mb);  // scatter/gather
          }
          boxing(s, in.fwd, tensor_name(in.tensor), mb, true, in.fwd_hidden_under, true);
        }
      }
      compute(s, op, po.fwd_s + po.fsdp_fwd_sm_s, Phase::forward, mb, false);
      for (const Edge& e : cross_consumers_[static_cast<size_t>(op)]) {
        const PlannedOp& consumer = plan_.ops[static_cast<size_t>(e.op)];
        const PlannedInput& in = consumer.inputs[static_cast<size_t>(e.k)];
        sent_[key(true, e.op, e.k, mb)] =
            send(s, consumer.stage, in.fwd_send_bytes, in.fwd_send_s, tensor_name(in.tensor), mb, consumer.stage);
      }
    }
    finish_unit(s);
    if (fsdp_) fsdp_leave(s);
    p2p_contention(s, mb);
  }

  void backward_unit(int s, int c, int mb) {
    const bool last = last_bwd_mb_[static_cast<size_t>(c)] == mb;
    const auto& ops = chunk_ops_[static_cast<size_t>(c)];
    int layer = -1;
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
      const int op = *it;
      const PlannedOp& po = plan_.ops[static_cast<size_t>(op)];
      if (fsdp_ && layer_[static_cast<size_t>(op)] != layer) {
        layer = layer_[static_cast<size_t>(op)];
        fsdp_enter(s, c, layer, false, mb);
      }
      for (const Edge& e : cross_consumers_[static_cast<size_t>(op)]) {
        const PlannedInput& in = plan_.ops[static_cast<size_t>(e.op)].inputs[static_cast<size_t>(e.k)];
        if (!in.bwd_send) continue;
        wait_for(s, take_sent(false, e.op, e.k, mb));
        boxing(s, in.bwd_send_gather, "gather recv grad " + tensor_name(in.tensor), mb);  // scatter/gather
      }
      for (const PlannedInput& in : po.inputs)
        if (in.role == InputRole::parameter && !fsdp_) boxing(s, in.bwd, "regather " + tensor_name(in.tensor), mb);
      if (po.recompute) {  // the forward re-runs from the checkpoint, collectives included
        for (const PlannedInput& in : po.inputs)
          if (in.role == InputRole::activation) boxing(s, in.fwd, "recompute " + tensor_name(in.tensor), mb);
      }
      for (const Edge& e : regather_at_[static_cast<size_t>(op)]) {
        const PlannedInput& in = plan_.ops[static_cast<size_t>(e.op)].inputs[static_cast<size_t>(e.k)];
        boxing(s, in.bwd_regather, "regather for wgrad " + tensor_name(in.tensor), mb, /*waited=*/false);
      }
      if (po.recompute_s > 0) compute(s, op, po.recompute_s, Phase::recompute, mb, false);
      // FSDP reduce-scatters every micro-batch's gradients: its buckets wait for this one's too.
      const bool record = (last || fsdp_) && bucket_op_[static_cast<size_t>(op)];
      compute(s, op, po.bwd_s + po.fsdp_bwd_sm_s, Phase::backward, mb, record);
      if (record) flush(s);  // a bucket waits for exactly this op
      for (int k = 0; k < static_cast<int>(po.inputs.size()); ++k) {
        const PlannedInput& in = po.inputs[static_cast<size_t>(k)];
        if (in.role != InputRole::activation) continue;
        boxing(s, in.bwd, "grad " + tensor_name(in.tensor), mb, true, in.bwd_hidden_under, false);
        if (in.bwd_send) {
          const int to = plan_.ops[static_cast<size_t>(in.producer)].stage;
          sent_[key(false, op, k, mb)] =
              send(s, to, in.bwd_send_bytes, in.bwd_send_s, "grad " + tensor_name(in.tensor), mb, s);
        }
      }
    }
    finish_unit(s);
    if (fsdp_) {
      fsdp_leave(s);
      // The stage's backward of this micro-batch ends with its first chunk (c == s): its
      // gradients are reduce-scattered now; the last micro-batch's by emit_buckets.
      if (!last && c == s) emit_stage_buckets(s);
    }
  }

  bool emitted(bool forward, int c, int mb) const {
    return emitted_[(static_cast<size_t>(c) * static_cast<size_t>(m_) + static_cast<size_t>(mb)) * 2 + (forward ? 1 : 0)];
  }

  bool ready(const WorkUnit& u) const {
    if (u.forward) {
      for (int p : fwd_in_[static_cast<size_t>(u.chunk)])
        if (!emitted(true, p, u.micro_batch)) return false;
      return true;
    }
    if (!emitted(true, u.chunk, u.micro_batch)) return false;
    for (int q : bwd_in_[static_cast<size_t>(u.chunk)])
      if (!emitted(false, q, u.micro_batch)) return false;
    return true;
  }

  void emit_units() {
    emitted_.assign(static_cast<size_t>(C_) * static_cast<size_t>(m_) * 2, 0);
    std::vector<size_t> next(static_cast<size_t>(S_), 0);
    size_t remaining = 0;
    for (const auto& o : order_) remaining += o.size();
    while (remaining > 0) {
      bool progress = false;
      for (int s = 0; s < S_; ++s) {
        const auto& order = order_[static_cast<size_t>(s)];
        size_t& n = next[static_cast<size_t>(s)];
        while (n < order.size() && ready(order[n])) {
          const WorkUnit& u = order[n];
          if (u.forward) forward_unit(s, u.chunk, u.micro_batch);
          else backward_unit(s, u.chunk, u.micro_batch);
          emitted_[(static_cast<size_t>(u.chunk) * static_cast<size_t>(m_) + static_cast<size_t>(u.micro_batch)) * 2 +
                   (u.forward ? 1 : 0)] = 1;
          ++n;
          --remaining;
          progress = true;
        }
      }
      if (!progress) {
        for (int s = 0; s < S_; ++s) {
          const size_t n = next[static_cast<size_t>(s)];
          if (n == order_[static_cast<size_t>(s)].size()) continue;
          const WorkUnit& u = order_[static_cast<size_t>(s)][n];
          throw InputError("scheme", "op_chunk",
                           "the pipeline cannot be scheduled: stage " + std::to_string(s) + " waits to run the " +
                               (u.forward ? "forward" : "backward") + " of chunk " + std::to_string(u.chunk) +
                               " on micro-batch " + std::to_string(u.micro_batch) +
                               " for a chunk it runs later (chunks must follow the op order)");
        }
      }
    }
  }

  // ---- gradient sync and optimizer -----------------------------------------------------

  void emit_buckets() {
    for (int s = 0; s < S_; ++s) emit_stage_buckets(s);
  }

  // Stage s's gradient buckets, each after the compute of the ops whose gradients it carries
  // (op_task_: the micro-batch last recorded).
  void emit_stage_buckets(int s) {
    const std::vector<char> all(static_cast<size_t>(pl_.positions()), 1);
    {
      int n = 0;
      for (const costmodel::PlannedBucket& b : plan_.buckets[static_cast<size_t>(s)]) {
        const std::string name = "bucket " + std::to_string(n++);
        for (size_t x = 0; x < b.steps.size(); ++x) {
          const BoxingStep& step = b.steps[x];
          for (const std::vector<int>& grp : pl_.groups(step.dim, all)) {
            Task t = step_task(step, Phase::grad_sync, kGradSyncStream, name, s);
            for (int pos : grp) {
              t.devices.push_back(pl_.device(s, pos));
              if (x > 0) continue;  // later steps follow the first on each device's stream
              const int ai = rep_index_[static_cast<size_t>(pos)];
              for (const costmodel::PlannedGradient& gr : b.grads)
                t.deps.push_back(op_task_[static_cast<size_t>(gr.op)][static_cast<size_t>(ai)]);
            }
            t.deps = unique(std::move(t.deps));
            add(std::move(t), step.time_s);
          }
        }
      }
    }
  }

  void emit_optimizer() {
    for (int s = 0; s < S_; ++s) {
      const double seconds = plan_.optimizer_s[static_cast<size_t>(s)];
      if (seconds <= 0) continue;
      for (size_t ai = 0; ai < active_pos_.size(); ++ai) {
        const int dev = device(s, static_cast<int>(ai));
        Task t;
        t.kind = TaskKind::compute;
        t.phase = Phase::optimizer;
        t.name = "optimizer";
        t.devices = {dev};
        t.seconds = seconds;
        t.stage = s;
        const TaskId synced = prog_->last_on(dev, kGradSyncStream);
        if (synced >= 0) t.deps = {synced};
        add(std::move(t), seconds);
      }
    }
  }

  // ZeRO-1: each replica all-gathers the parameter shards it updated, after its optimizer step.
  void emit_param_gathers() {
    if (plan_.param_gathers.empty()) return;
    const std::vector<char> all(static_cast<size_t>(pl_.positions()), 1);
    for (int s = 0; s < S_; ++s) {
      int n = 0;
      for (const costmodel::PlannedBucket& b : plan_.param_gathers[static_cast<size_t>(s)]) {
        const std::string name = "param gather " + std::to_string(n++);
        for (size_t x = 0; x < b.steps.size(); ++x) {
          const BoxingStep& step = b.steps[x];
          for (const std::vector<int>& grp : pl_.groups(step.dim, all)) {
            Task t = step_task(step, Phase::optimizer, kGradSyncStream, name, s);
            for (int pos : grp) {
              const int dev = pl_.device(s, pos);
              t.devices.push_back(dev);
              if (x > 0) continue;  // later steps follow the first on each device's stream
              const TaskId stepped = prog_->last_on(dev, kComputeStream);
              if (stepped >= 0) t.deps.push_back(stepped);
            }
            t.deps = unique(std::move(t.deps));
            add(std::move(t), step.time_s);
          }
        }
      }
    }
  }

  const costmodel::Graph& g_;
  const IterationPlan& plan_;
  lowering::Placement pl_;
  LoweredProgram& out_;
  Program* prog_ = nullptr;
  int gpus_per_node_ = 1;
  int S_ = 1, m_ = 1, v_ = 1, C_ = 1, n_ops_ = 0;
  bool merge_ = false;
  // FSDP (IterationPlan::fsdp): per op its layer, per layer its ops, and the gathers' stream.
  bool fsdp_ = false;
  std::vector<int> layer_;
  std::vector<std::vector<int>> layer_ops_;
  int param_stream_ = -1;
  bool oversubscribed_ = false;  // a fat tree whose leaves have less uplink than downlink
  std::vector<int> op_chunk_;
  std::vector<std::vector<int>> chunk_ops_, fwd_in_, bwd_in_;
  std::vector<std::vector<Edge>> cross_consumers_;
  std::vector<char> bucket_op_;
  std::vector<std::vector<Edge>> regather_at_;  // per op: the wgrad re-gathers its backward launches
  std::vector<std::vector<WorkUnit>> order_;
  std::vector<int> last_bwd_mb_;
  std::vector<char> active_;       // per position
  std::vector<int> active_pos_;    // computing positions
  std::vector<int> index_;         // per position: its computing index, -1 for a mirror
  std::vector<int> rep_index_;     // per position: computing index of its representative
  std::vector<char> folded_;       // per SBP dim
  std::vector<int> channels_;      // per SBP dim: Task::channels of its collectives
  std::vector<std::vector<std::vector<int>>> boxing_groups_;  // per SBP dim: groups of positions
  std::vector<std::pair<std::pair<int, int>, int>> link_color_;
  int links_colors_ = 0;
  std::vector<StageState> state_;
  std::unordered_map<uint64_t, std::vector<TaskId>> sent_;
  std::vector<std::vector<TaskId>> op_task_;  // per op: the backward task a bucket waits for
  std::vector<char> emitted_;
};

}  // namespace
}  // namespace lowering

LoweredProgram lower_scheme(const costmodel::Graph& graph, const costmodel::ClusterSpec& cluster,
                            const costmodel::Scheme& scheme, const LoweringOptions& options) {
  LoweredProgram out;
  IterationPlan plan;
  out.analytical = costmodel::evaluate(graph, cluster, scheme, &plan);
  out.train_dtype = plan.train_dtype;
  lowering::Lowerer(graph, scheme, cluster, plan, options, out).run();
  return out;
}

}  // namespace autoddl::sim
