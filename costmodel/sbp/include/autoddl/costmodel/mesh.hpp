// DeviceMesh: a logical shape over a cluster's GPUs (row-major over GPU ids, which run node by
// node), each dimension with the α-β of the links its groups use. A dim whose groups stay in a
// node gets NVLink/PCIe; a dim whose groups cross nodes gets the network, with each node's NIC
// bandwidth shared by all of that node's groups of the dim (in SPMD they talk at the same time).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/collective.hpp"
#include "autoddl/costmodel/nccl_model.hpp"
#include "autoddl/costmodel/sbp.hpp"

namespace autoddl::costmodel {

enum class CalibrationMatch;  // calibration.hpp

struct MeshDim {
  int size = 1;
  int stride = 1;            // GPU-id distance between neighbours in a group
  int ranks_per_node = 1;    // members of one group inside one node
  int groups_per_node = 1;   // groups of this dim with members in one node (share its NICs)
  bool crosses_nodes = false;
  LinkTier tier;             // per-step α, per-byte β of one group's ring
  // The tier an all-to-all sees (the direct exchange, priced by the same tier formula): `tier`
  // inside a node; across nodes every GPU of a node sends its cross-node share at once, so each
  // gets 1/gpus_per_node of the node's NICs, not the per-group share a ring step sees.
  LinkTier a2a_tier;
  // NCCL's tuner for one group of this dim (its NIC share included), when the cluster has an
  // `nccl` block: all-reduce, all-gather and reduce-scatter are then priced by NCCL's model.
  std::shared_ptr<const NcclTuning> nccl;
  // `nccl` with the calibration's fitted NCCL-model tier for this dim applied, when both exist.
  std::shared_ptr<const NcclTuning> nccl_fitted;
};

struct DeviceMesh {
  std::vector<MeshDim> dims;
  // Measured collectives (the cluster's calibration): the entry measured with the dim's group
  // shape and groups per node (concurrent groups share the NICs), else NCCL's model with the
  // fitted NCCL-model tier (nccl_fitted), else its fitted link tier.
  std::shared_ptr<const Calibration> calibration;
  int devices() const;
  int ndims() const { return static_cast<int>(dims.size()); }
  std::vector<int> shape() const;
  std::string shape_string() const;  // "4x8"
  // Per-device time of a 1-D collective on dim d (nccl-tests bytes convention) and the
  // algorithm it was priced with: calibrated where measured (see `calibration`), else NCCL's
  // model and pick where the dim has one (all-reduce, all-gather, reduce-scatter), else the
  // fastest tier formula of the algorithm table on the dim's tier (tier_collective_time: ring,
  // direct for all-to-all and send/recv, and any registered algorithm with a tier formula).
  CollectiveEstimate collective(int d, CollectiveKind kind, double bytes) const;
  double collective_time_s(int d, CollectiveKind kind, double bytes) const;
  // Which calibrated source collective_time_s uses on dim d (none: the cluster's own model).
  CalibrationMatch calibration_match(int d, CollectiveKind kind) const;
};

// Builds a mesh over the first prod(shape) GPUs of the cluster. The product must be at most
// the cluster's GPUs and fit node boundaries (a divisor of gpus_per_node or a multiple of it).
// Throws InputError(flag, "", reason).
DeviceMesh make_mesh(const ClusterSpec& c, const std::vector<int>& shape,
                     const std::string& flag = "--mesh");
// [nodes, gpus_per_node], dropping size-1 dims (a 1-GPU-per-node cluster gives [nodes]).
DeviceMesh default_mesh(const ClusterSpec& c);
// "4x8" or "32" -> {4, 8} / {32}; throws InputError(flag, "", reason).
std::vector<int> parse_mesh_shape(const std::string& text, const std::string& flag = "--mesh");

}  // namespace autoddl::costmodel
