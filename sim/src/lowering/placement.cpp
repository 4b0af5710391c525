// Stage × SBP position → GPU id, and the groups of each SBP dim (see placement.hpp).
#include "placement.hpp"

namespace autoddl::sim::lowering {

Placement::Placement(const costmodel::IterationPlan& plan) {
  const int nd = plan.sbp_mesh.ndims();
  sizes_.assign(static_cast<size_t>(nd), 1);
  device_stride_.assign(static_cast<size_t>(nd), 0);
  for (int d = 0; d < plan.mesh.ndims(); ++d) {
    const int s = plan.sbp_dim_of_mesh[static_cast<size_t>(d)];
    if (s < 0) {
      stages_ = plan.mesh.dims[static_cast<size_t>(d)].size;
      stage_stride_ = plan.mesh.dims[static_cast<size_t>(d)].stride;
    } else {
      sizes_[static_cast<size_t>(s)] = plan.mesh.dims[static_cast<size_t>(d)].size;
      device_stride_[static_cast<size_t>(s)] = plan.mesh.dims[static_cast<size_t>(d)].stride;
    }
  }
  pos_stride_.assign(static_cast<size_t>(nd), 1);
  positions_ = 1;
  for (int d = nd - 1; d >= 0; --d) {
    pos_stride_[static_cast<size_t>(d)] = positions_;
    positions_ *= sizes_[static_cast<size_t>(d)];
  }
}

int Placement::device(int stage, int pos) const {
  int dev = stage * stage_stride_;
  for (size_t d = 0; d < sizes_.size(); ++d) dev += coord(pos, static_cast<int>(d)) * device_stride_[d];
  return dev;
}

std::vector<std::vector<int>> Placement::groups(int d, const std::vector<char>& keep) const {
  std::vector<std::vector<int>> out;
  for (int pos = 0; pos < positions_; ++pos) {
    if (coord(pos, d) != 0) continue;  // each group once, from its coordinate-0 member
    std::vector<int> g;
    bool all = true;
    for (int c = 0; c < size(d); ++c) {
      const int q = with_coord(pos, d, c);
      all = all && keep[static_cast<size_t>(q)];
      g.push_back(q);
    }
    if (all) out.push_back(std::move(g));
  }
  return out;
}

}  // namespace autoddl::sim::lowering
