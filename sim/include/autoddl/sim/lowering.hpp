// Lowering: one training iteration of a scheme (graph, cluster, scheme) as a Program. It replays
// what costmodel's evaluate() priced (IterationPlan), so uncontended the simulation agrees with
// the analytical model, and contention, overlap and schedules are what the simulator adds:
//  - per device and micro-batch, forward and backward compute per op (seconds from
//    kernel_time_s), recompute before backward where the scheme recomputes;
//  - boxing: each edge's BoxingTable path, one collective per step over the groups of that
//    step's mesh dim, on the "boxing" stream; the consumer's compute waits for it, and it waits
//    for the compute before it (Megatron's collectives are on the critical path, as costmodel
//    assumes);
//  - gradient sync: evaluate()'s DDP buckets, each step a collective on the "grad sync"
//    stream, released by the last micro-batch's backward of its gradients, overlapping the rest;
//    then the optimizer step;
//  - pipelines: stage-boundary send/recv of each device's local piece on one stream per
//    (stage, stage) direction, units in GPipe / 1F1B / interleaved 1F1B order;
//  - tp_overlap: each collective evaluate() hid under a GEMM pass runs beside that GEMM (from
//    its start, or from the end of the compute before it) instead of between computes, so only
//    what outlasts the GEMM is exposed; the chunked GEMM's extra time evaluate() charges runs
//    after both, as a compute task;
//  - pp_overlap: sends run beside compute as they always do here (the receiver waits), and the
//    forward of each unit is slowed by the SMs their NCCL kernels take, as evaluate() charges.
// Large meshes: devices of one data-parallel replica position behave identically, so a
// data-parallel mesh dim (parameters used broadcast on it) whose replicas sit on different
// nodes can be folded: replica 0 computes, the other replicas join only the collectives that
// span the folded dim (gradient sync, and boxing on it), released by replica 0's tasks, so
// those still contend for the NICs they share. Runs of compute between communications can be
// merged into one task each. Both keep the simulated iteration of symmetric replicas the same
// (tests/sim/lowering) and cut GPT-3 on 1024 GPUs from tens of millions of tasks to about
// 400 thousand; a fold drops only the other replicas' own traffic on their own nodes, so it
// can hide contention on shared fabric links (an oversubscribed fat tree): `off` keeps it.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/cost_report.hpp"
#include "autoddl/costmodel/graph.hpp"
#include "autoddl/costmodel/scheme.hpp"
#include "autoddl/sim/program.hpp"

namespace autoddl::sim {

// Streams of a lowered program (pipeline streams follow from kFirstPipelineStream).
inline constexpr int kBoxingStream = kCommStream;
inline constexpr int kGradSyncStream = 2;
inline constexpr int kFirstPipelineStream = 3;

enum class LoweringMode : uint8_t { automatic, on, off };
std::string_view lowering_mode_name(LoweringMode m);
bool parse_lowering_mode(std::string_view text, LoweringMode& out);

struct LoweringOptions {
  // Fold data-parallel replicas (see above). automatic: when the per-op program without
  // folding would have more than max_tasks compute tasks, and the network is not an
  // oversubscribed fat tree (where the dropped traffic would contend for leaf uplinks).
  LoweringMode fold_replicas = LoweringMode::automatic;
  // One compute task per run of ops between communications instead of per op. automatic:
  // when the (folded) per-op program would still have more than max_tasks compute tasks.
  LoweringMode merge_compute = LoweringMode::automatic;
  size_t max_tasks = 250000;
};

// A framework overlap the scheme uses (tp_overlap, pp_overlap), and the seconds evaluate() hid
// under compute with it per iteration, per stage.
struct PlannedOverlap {
  Overlap kind = Overlap::none;
  std::vector<double> analytical_hidden_s;  // per stage
};

struct LoweredProgram {
  Program program{1};
  costmodel::CostReport analytical;  // evaluate() of the same scheme
  // Per task: the seconds the analytical model charged for it (compute: its kernel time;
  // a collective step: its α-β time; send/recv: α + S·β); contention shows as the excess.
  std::vector<double> expected_s;
  std::vector<int> device_stage;    // per device
  std::vector<char> computes;       // per device: 0 for a folded replica (gradient sync only)
  int replicas_folded = 1;          // devices each computing device stands for
  std::vector<int> folded_mesh_dims;
  bool merged = false;              // compute tasks are runs of ops
  // The training dtype (the plan's: the parameters'); the simulated GPUs run at its peak.
  costmodel::DType train_dtype = costmodel::DType::fp32;
  std::vector<PlannedOverlap> overlaps;  // tp, then pp, where the scheme uses them
  int computing_devices() const;
};

// Throws InputError("scheme", ...) when evaluate() does, or ("scheme", "op_chunk", ...)
// when the chunks cannot be scheduled (an edge to an earlier chunk).
LoweredProgram lower_scheme(const costmodel::Graph& graph, const costmodel::ClusterSpec& cluster,
                            const costmodel::Scheme& scheme, const LoweringOptions& options = {});

}  // namespace autoddl::sim
