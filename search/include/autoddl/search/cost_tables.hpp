// Precomputed cost tables for the SBP search (AutoDDL TPDS'23; OneFlow's SbpNode/SbpEdge): per op
// its candidate choices (a legal nd signature, optionally with ZeRO-sharded parameter storage)
// with a node cost, per producer→consumer edge a forward and a backward boxing term read from the
// shared BoxingTables (two lookups of state indices stored per choice), and per-device memory.
// The objective of an assignment is Σ node + Σ term + a memory penalty, in seconds per iteration:
// an additive surrogate of costmodel::evaluate() built from the functions of its phases
// (op_compute, BoxingTable, stage_send_s, grad_sync_states, param_memory, optimizer_step_s);
// evaluate() stays the judge.
#pragma once
#include <array>
#include <memory>
#include <vector>

#include "autoddl/costmodel/boxing.hpp"
#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/graph.hpp"
#include "autoddl/costmodel/scheme.hpp"
#include "autoddl/costmodel/signature.hpp"

namespace autoddl::search {

using costmodel::kMaxOpInputs;
using costmodel::kMaxOpOutputs;

struct TableOptions {
  std::vector<int> mesh_shape;   // the whole mesh, pipeline dim included (must be given)
  int pipeline_dim = -1;         // -1 = no pipeline
  int micro_batches = 1;
  std::vector<int> op_stage;     // per op, with a pipeline dim; empty = all in stage 0
  // Interleaved 1F1B (Megatron-LM): v chunks per stage, op_chunk per op (its stage is
  // op_chunk % stages, which op_stage must equal). v = 1: plain 1F1B, op_chunk unused.
  int virtual_stages = 1;
  std::vector<int> op_chunk;
  // Pipeline sends on their own stream under the stage's compute (Scheme::overlap_p2p_comm):
  // the tables charge them nothing, as evaluate() does while they stay below the compute.
  bool overlap_p2p = false;
  costmodel::Recompute recompute = costmodel::Recompute::none;
  bool zero_storage = true;      // also offer ZeRO-3 storage (split on replicated dims, regathered)
  bool shard_optimizer = true;   // ZeRO-1 optimizer state: reduce-scattered gradients, a step on the
                                 // shard, an exposed all-gather after it (as evaluate() prices it)
  double sync_weight = 1.0;      // weight of gradient sync, which partly hides behind backward
  double memory_capacity_bytes = -1;  // per device; < 0 = the GPU's memory
  double memory_penalty_s_per_byte = 1e-6;  // 1 ms per exceeding kB: memory dominates time
};

// Per tensor shape: its boxing table and, per state, one device's bytes. (The gradient state a
// producer needs is its signature's out_grad, derive_backward's rule.)
struct TensorInfo {
  const costmodel::BoxingTable* table = nullptr;
  std::vector<double> local_bytes;
};

// Ops with equal kind, attributes, work and operand shapes share their choices (a transformer's
// layers share one class per position), so set-up costs O(classes × signatures + ops).
struct OpClass {
  std::vector<costmodel::OpSignature> sigs;
  int n_choices = 0;
  std::vector<int> sig_of;           // per choice
  std::vector<uint8_t> zero;         // per choice: parameters stored ZeRO-sharded
  std::vector<double> compute_s;     // per choice: forward + backward (+ recompute), per iteration
  // Per choice: one micro-batch's data-gradient GEMM (half the backward kernels), under which a
  // weight GEMM's backward re-gather of its input hides (boxing_plan.hpp).
  std::vector<double> dgrad_s;
  // Per choice, boxing-state indices of each operand (-1 = none), strides kMaxOpInputs / Outputs.
  std::vector<int16_t> in_state, in_grad_state, store_state;
  std::vector<int16_t> out_state, out_grad_state;
  std::array<const TensorInfo*, kMaxOpInputs> in_info{};
  std::array<const TensorInfo*, kMaxOpOutputs> out_info{};
};

enum class TermKind : uint8_t {
  forward,   // [producer, consumers...] of one stage: one send/recv across stages, then
             // out → in boxing once per distinct input state (readers share the result)
  backward,  // [producer, consumers...]: each distinct input-gradient state → the producer's
             // output-gradient state, once (gradients that share an SBP are summed first)
  tied,      // [first reader, later reader] of a parameter: gather storage → use, and the
             // later reader's gradient sync when it is first in another pipeline stage
};

struct Term {
  TermKind kind = TermKind::forward;
  int first = 0, count = 0;          // members in CostTables::term_ops / term_ports
  const TensorInfo* info = nullptr;
  double scale = 1;                  // boxing executions per iteration: micro-batches × bubble_factor()
  bool cross_stage = false;          // the producer is on another stage: send/recv (stage_send_s)
  double sync_weight = 0;            // tied: weight of the later reader's gradient sync (0 = none)
};

// Extra memory an op's choice puts on another stage (a tied parameter stored by its first reader).
struct MemTerm {
  int op = 0, stage = 0, begin = 0;  // values in CostTables::extra_mem_bytes[begin + choice]
};

class CostTables {
 public:
  // Keeps references to graph and cluster (temporaries are refused at compile time). Throws
  // InputError("--mesh", ...) when the mesh does not fit the cluster.
  CostTables(const costmodel::Graph& graph, const costmodel::ClusterSpec& cluster, TableOptions opt);
  CostTables(costmodel::Graph&&, const costmodel::ClusterSpec&, TableOptions) = delete;
  CostTables(const costmodel::Graph&, costmodel::ClusterSpec&&, TableOptions) = delete;
  CostTables(const CostTables&) = delete;
  CostTables& operator=(const CostTables&) = delete;

  const costmodel::Graph& graph() const { return *graph_; }
  const costmodel::ClusterSpec& cluster() const { return *cluster_; }
  const TableOptions& options() const { return opt_; }
  const std::vector<int>& sbp_shape() const { return sbp_shape_; }
  int stages() const { return stages_; }
  // Per-micro-batch costs (compute, boxing, sends) are charged m · (1 + (S − 1)/(v·m)) times: the
  // micro-batches plus the pipeline bubble, as evaluate() adds the bubble to the slowest stage's
  // m · T (1 without a pipeline). Gradient sync and the optimizer step are once per iteration.
  double bubble_factor() const { return bubble_factor_; }
  // Micro-batches whose activations `stage` holds (in_flight_micro_batches with the tables'
  // schedule: 1F1B, or interleaved with v chunks).
  double in_flight(int stage) const;

  int ops() const { return static_cast<int>(op_cls_.size()); }
  const OpClass& cls(int op) const { return classes_[op_cls_[op]]; }
  int class_of(int op) const { return op_cls_[op]; }
  int classes() const { return static_cast<int>(classes_.size()); }
  int choices(int op) const { return cls(op).n_choices; }
  int stage(int op) const { return op_stage_[op]; }
  const costmodel::OpSignature& signature(int op, int c) const { return cls(op).sigs[cls(op).sig_of[c]]; }
  double node_s(int op, int c) const { return node_s_[begin_[op] + c]; }
  double memory_bytes(int op, int c) const { return mem_bytes_[begin_[op] + c]; }
  // The activation part of memory_bytes (already times the stage's in-flight micro-batches).
  double activation_bytes(int op, int c) const { return act_bytes_[begin_[op] + c]; }
  // Term pricing flags of an op (term_cost reads them): its forward re-runs in backward; a weight
  // GEMM that gathers its input again in backward.
  bool recomputes_op(int op) const { return recompute_op_[op] != 0; }
  bool weight_gemm_op(int op) const { return weight_gemm_op_[op] != 0; }
  double capacity_bytes(int stage) const { return capacity_[stage]; }
  void set_capacity_bytes(int stage, double bytes) { capacity_[stage] = bytes; }
  double penalty_s_per_byte() const { return opt_.memory_penalty_s_per_byte; }

  int terms() const { return static_cast<int>(terms_.size()); }
  const Term& term(int t) const { return terms_[t]; }
  const int* term_members(int t) const { return &term_ops_[terms_[t].first]; }
  const int8_t* term_ports(int t) const { return &term_ports_[terms_[t].first]; }
  // Cost in seconds of one term given every op's choice.
  double term_cost(int t, const int* choice) const;
  // What term_cost reads of member `l` of term t at choice c (its boxing states, and the ZeRO
  // flag or data-gradient time where the term prices them), written to out (at most
  // kMaxTermKey values); returns how many. Two choices of that member with equal keys price the
  // term alike whatever the other members choose.
  static constexpr int kMaxTermKey = 2;
  int term_key(int t, int l, int c, uint64_t* out) const;
  // A backward term's charge for one distinct input-gradient state g into output-gradient og.
  double backward_pair_s(const Term& t, int g, int og) const;
  // A forward term's stage-crossing send of the producer's piece in `out_state` (0 if none).
  double forward_send_s(const Term& t, int out_state) const;
  // Terms touching an op.
  const int* op_terms(int op, int& n) const {
    n = op_terms_begin_[op + 1] - op_terms_begin_[op];
    return &op_terms_[op_terms_begin_[op]];
  }
  const std::vector<MemTerm>& mem_terms() const { return mem_terms_; }
  const std::vector<int>& op_mem_terms(int op) const { return op_mem_terms_[op]; }
  double extra_mem_bytes(const MemTerm& m, int c) const { return extra_mem_[m.begin + c]; }

  // The ZeRO storage of a choice differs from the plain one on some parameter.
  bool zero_choice(int op, int c) const { return cls(op).zero[c] != 0; }
  // Parameter storage (over the SBP dims) of choice c of the op that reads tensor t first.
  costmodel::NdSbp storage_of(int op, int slot, int c) const;
  int first_reader(int tensor) const { return first_reader_[tensor]; }

 private:
  void build_classes();
  void build_nodes();
  void build_terms();

  const costmodel::Graph* graph_;
  const costmodel::ClusterSpec* cluster_;
  TableOptions opt_;
  std::vector<int> sbp_shape_;
  int stages_ = 1;
  double bubble_factor_ = 1;
  std::unique_ptr<costmodel::BoxingCache> cache_;
  std::vector<std::unique_ptr<TensorInfo>> infos_;
  std::vector<OpClass> classes_;
  std::vector<int> op_cls_, op_stage_, begin_, first_reader_;
  std::vector<costmodel::Shape> shape_mb_;
  std::vector<double> bytes_mb_;
  std::vector<double> node_s_, mem_bytes_, act_bytes_, capacity_;
  std::vector<Term> terms_;
  std::vector<int> term_ops_;
  std::vector<int8_t> term_ports_;
  std::vector<char> recompute_op_;  // per op: its forward re-runs in backward (boxing twice)
  // Per op: a GEMM of an activation (port 0) by a weight, which gathers its input again in
  // backward when it arrives gathered from a smaller layout (boxing_plan.cpp).
  std::vector<char> weight_gemm_op_;
  std::vector<int> op_terms_begin_, op_terms_;
  std::vector<MemTerm> mem_terms_;
  std::vector<std::vector<int>> op_mem_terms_;
  std::vector<double> extra_mem_;
  costmodel::LinkTier pp_tier_;
};

// The in-flight micro-batches whose activations a stage holds under 1F1B (min(m, S − s)), times
// 1 + (S − 1)/(S·v) when interleaved: costmodel::in_flight_micro_batches, as evaluate() counts them.
double in_flight(int stage, int stages, int micro_batches, int virtual_stages = 1);

}  // namespace autoddl::search
