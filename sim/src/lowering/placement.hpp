// Where a scheme's work runs: the mesh (row-major over GPU ids, as costmodel's make_mesh lays
// it out) seen as pipeline stage × SBP position. A position is a row-major index over the SBP
// dims; the group of a collective on SBP dim d is the positions that differ only in their
// coordinate on d, in coordinate order (the ring order; ascending GPU ids, so node-major).
#pragma once
#include <vector>

#include "autoddl/costmodel/iteration_plan.hpp"

namespace autoddl::sim::lowering {

class Placement {
 public:
  explicit Placement(const costmodel::IterationPlan& plan);

  int stages() const { return stages_; }
  int positions() const { return positions_; }
  int sbp_dims() const { return static_cast<int>(sizes_.size()); }
  int size(int d) const { return sizes_[static_cast<size_t>(d)]; }
  int devices() const { return stages_ * positions_; }

  int device(int stage, int pos) const;
  int coord(int pos, int d) const { return pos / pos_stride_[static_cast<size_t>(d)] % sizes_[static_cast<size_t>(d)]; }
  // `pos` with its coordinate on dim d set to c.
  int with_coord(int pos, int d, int c) const { return pos + (c - coord(pos, d)) * pos_stride_[static_cast<size_t>(d)]; }
  // Every group along SBP dim d whose positions all satisfy `keep` (a per-position flag),
  // each in ring order.
  std::vector<std::vector<int>> groups(int d, const std::vector<char>& keep) const;

 private:
  int stages_ = 1;
  int positions_ = 1;
  int stage_stride_ = 0;            // GPU-id distance between stages
  std::vector<int> sizes_;          // per SBP dim
  std::vector<int> pos_stride_;     // per SBP dim, within a position index
  std::vector<int> device_stride_;  // per SBP dim, in GPU ids (0 for the size-1 placeholder)
};

}  // namespace autoddl::sim::lowering
