// Boxing: the collectives that convert a tensor from one nd-SBP to another on a device mesh.
// 1-D rule (DESIGN.md, per-device ring α-β on a dim of p devices, |T| the group's tensor):
//   S→B all-gather, P→B all-reduce, P→S reduce-scatter, S(i)→S(j) all-to-all of |T|/p per rank,
//   B→S, B→P, S→P local (free), same → free.
// nd rule: a step changes one mesh dim with the 1-D rule on |T| divided by the split factors
// of the other dims; a conversion is the cheapest sequence of steps through intermediate
// nd-SBPs (Dijkstra over the tensor's valid nd-SBPs). On [nodes, gpus] this finds the
// hierarchical all-reduce (RS intra, AR inter on |T|/g, AG intra) when it is cheaper.
#pragma once
#include <map>
#include <memory>
#include <vector>

#include "autoddl/costmodel/comm_tally.hpp"
#include "autoddl/costmodel/mesh.hpp"
#include "autoddl/costmodel/sbp.hpp"

namespace autoddl::costmodel {

struct BoxingStep {
  int dim = 0;
  CollectiveKind kind = CollectiveKind::all_reduce;
  double bytes = 0;       // nccl-tests size S of the step's collective
  double wire_bytes = 0;  // what each device sends: bw_factor(p) · S
  double time_s = 0;
  CollectiveAlgo algo = CollectiveAlgo::ring;  // what time_s was priced with; the simulator runs it
};

// 1-D step cost on mesh dim d for a group tensor of `group_bytes`; returns false when the
// conversion is local (no collective). Never fails: every 1-D pair is convertible.
bool boxing_step_1d(const DeviceMesh& mesh, int d, Sbp from, Sbp to, double group_bytes,
                    BoxingStep& step);

// All-pairs boxing costs for one tensor (shape, bytes) on one mesh: the valid nd-SBPs of the
// tensor, and for each (from, to) pair the cheapest path's time and steps. Built once per
// distinct tensor shape and shared (see BoxingCache).
class BoxingTable {
 public:
  BoxingTable(const DeviceMesh& mesh, const Shape& shape, double logical_bytes);
  // Index of an nd-SBP in states(), or -1 if it is not valid for this tensor.
  int index_of(const NdSbp& s) const;
  const std::vector<NdSbp>& states() const { return states_; }
  double time_s(int from, int to) const { return time_[from * n_ + to]; }
  // Adds the path's collectives into `tally` (scaled by `times`).
  void tally(int from, int to, CommTally& tally, double times = 1) const;
  std::vector<BoxingStep> path(int from, int to) const;

 private:
  int n_ = 0;
  std::vector<NdSbp> states_;
  std::vector<double> time_;       // n×n
  std::vector<int> next_;          // first hop of the cheapest path (n×n), -1 = none
  std::vector<BoxingStep> hop_;    // the direct step between states (n×n)
};

// Shares BoxingTables between tensors of the same shape and bytes on one mesh.
class BoxingCache {
 public:
  explicit BoxingCache(const DeviceMesh& mesh) : mesh_(mesh) {}
  const BoxingTable& get(const Shape& shape, double logical_bytes);
  const DeviceMesh& mesh() const { return mesh_; }

 private:
  DeviceMesh mesh_;
  std::map<std::pair<Shape, double>, std::unique_ptr<BoxingTable>> tables_;
};

// Time of one conversion (builds a table; for one-off use and tests).
double boxing_time_s(const DeviceMesh& mesh, const Shape& shape, double logical_bytes,
                     const NdSbp& from, const NdSbp& to);

}  // namespace autoddl::costmodel
