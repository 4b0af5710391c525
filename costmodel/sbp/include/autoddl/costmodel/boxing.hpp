// Boxing: the collectives that convert a tensor from one nd-SBP to another on a device mesh.
// 1-D rule (DESIGN.md, per-device ring α-β on a dim of p devices, |T| the group's tensor):
//   S→B all-gather, P→B all-reduce, P→S reduce-scatter, S(i)→S(j) all-to-all of |T|/p per rank,
//   B→S, B→P, S→P local (free), same → free.
// nd rule: a step changes one mesh dim with the 1-D rule on |T| divided by the split factors
// of the other dims; a conversion is the cheapest sequence of steps through intermediate
// nd-SBPs (Dijkstra over the tensor's valid nd-SBPs). On [nodes, gpus] this finds the
// hierarchical all-reduce (RS intra, AR inter on |T|/g, AG intra) when it is cheaper.
#pragma once
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
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

// Boxing costs for one tensor (shape, bytes) on one mesh: the valid nd-SBPs of the tensor, and
// for each (from, to) pair the cheapest path's time and steps. The steps (edges between nd-SBPs
// one mesh dim apart) are priced when the table is built; the cheapest paths from a state are
// found (Dijkstra on (time, collective steps): among equally fast conversions the one with fewer
// collectives) the first time that state is asked about, and kept. An evaluation asks about a
// few states per tensor, so it pays for those rows, not for all pairs. Safe to read from several
// threads (a row is built once, under a lock). Built once per distinct tensor shape and shared
// (see BoxingCache).
class BoxingTable {
 public:
  // exact_layout: mesh dims nest lower-outer and a step may not move a split of an axis that a
  // higher dim also splits (boxing.cpp, nesting_allows). Off for a parameter's storage and
  // optimizer shard, whose block order is the framework's to choose (a hierarchical
  // reduce-scatter, intra-node first, leaves the shards transposed, and the gather undoes it).
  BoxingTable(const DeviceMesh& mesh, const Shape& shape, double logical_bytes, bool exact_layout = true);
  BoxingTable(const BoxingTable&) = delete;
  BoxingTable& operator=(const BoxingTable&) = delete;
  // Index of an nd-SBP in states(), or -1 if it is not valid for this tensor.
  int index_of(const NdSbp& s) const;
  const std::vector<NdSbp>& states() const { return states_; }
  double time_s(int from, int to) const {
    ensure_row(from);
    return time_[static_cast<size_t>(from) * n_ + to];
  }
  // Adds the path's collectives into `tally` (scaled by `times`).
  void tally(int from, int to, CommTally& tally, double times = 1) const;
  std::vector<BoxingStep> path(int from, int to) const;
  // The nd-SBPs the cheapest path visits, `from` first and `to` last, local steps included
  // (path() keeps only the collectives): what a replay with real tensors walks.
  std::vector<NdSbp> route(int from, int to) const;

 private:
  struct Edge {
    int from = 0, to = 0;
    int steps = 0;     // 1 for a collective, 0 for a local step
    BoxingStep step;   // step.time_s < 0: local (no collective)
  };
  // The row of `from` (time_ and via_ at from·n): built on first use.
  void ensure_row(int from) const {
    if (!built_[static_cast<size_t>(from)].load(std::memory_order_acquire)) build_row(from);
  }
  void build_row(int from) const;

  int n_ = 0;
  int radix_ = 1;                  // values per mesh dim: B, P, S(0..rank-1)
  std::vector<NdSbp> states_;
  std::vector<int> index_;         // state code -> index in states_, -1 when not valid
  std::vector<int> edge_begin_;    // edges of state i: edges_[edge_begin_[i], edge_begin_[i + 1])
  std::vector<Edge> edges_;
  // Per row (n×n, the row of a state filled when built_): the cheapest time from it to each
  // state, and the edge entering each state on that path (-1 at the start or unreached).
  mutable std::vector<double> time_;
  mutable std::vector<int> via_;
  mutable std::unique_ptr<std::atomic<bool>[]> built_;
  mutable std::mutex build_;
};

// Shares BoxingTables between tensors of the same shape and bytes on one mesh.
class BoxingCache {
 public:
  explicit BoxingCache(const DeviceMesh& mesh) : mesh_(mesh) {}
  const BoxingTable& get(const Shape& shape, double logical_bytes, bool exact_layout = true);
  const DeviceMesh& mesh() const { return mesh_; }

 private:
  DeviceMesh mesh_;
  std::map<std::tuple<Shape, double, bool>, std::unique_ptr<BoxingTable>> tables_;
};

// Time of one conversion (builds a table; for one-off use and tests).
double boxing_time_s(const DeviceMesh& mesh, const Shape& shape, double logical_bytes,
                     const NdSbp& from, const NdSbp& to);

}  // namespace autoddl::costmodel
