// Device meshes over a cluster and the α-β of each mesh dim (see mesh.hpp). A dim's groups
// are the GPUs whose ids differ only in that dim's digit (row-major ids, node-major GPUs).
#include "autoddl/costmodel/mesh.hpp"

#include <algorithm>
#include <cstdio>

#include "autoddl/costmodel/calibration.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/text_integer.hpp"

namespace autoddl::costmodel {

int DeviceMesh::devices() const {
  int n = 1;
  for (const MeshDim& d : dims) n *= d.size;
  return n;
}

double DeviceMesh::collective_time_s(int d, CollectiveKind kind, double bytes) const {
  return collective(d, kind, bytes).time_s;
}

CollectiveEstimate DeviceMesh::collective(int d, CollectiveKind kind, double bytes) const {
  const MeshDim& m = dims[d];
  if (calibration && m.size > 1) {
    CalibrationMatch how = CalibrationMatch::none;
    const double t = calibration->collective_time_s(kind, CommGroup{m.size, m.ranks_per_node},
                                                    m.groups_per_node, bytes, &how);
    if (how == CalibrationMatch::measured) return {t, CollectiveAlgo::calibrated, {}};
    if (m.nccl_fitted) {
      const NcclEstimate e = nccl_time(*m.nccl_fitted, kind, bytes);
      if (e.time_s >= 0) return {e.time_s, collective_algo_of(e.algo), nccl_proto_name(e.proto), e.channels};
    }
    if (t >= 0) return {t, CollectiveAlgo::calibrated, {}};
  }
  if (m.nccl && m.size > 1) {
    const NcclEstimate e = nccl_time(*m.nccl, kind, bytes);
    if (e.time_s >= 0) return {e.time_s, collective_algo_of(e.algo), nccl_proto_name(e.proto), e.channels};
  }
  return tier_collective_time(kind, m.size, bytes, kind == CollectiveKind::all_to_all ? m.a2a_tier : m.tier);
}

CalibrationMatch DeviceMesh::calibration_match(int d, CollectiveKind kind) const {
  const MeshDim& m = dims[d];
  if (!calibration || m.size <= 1) return CalibrationMatch::none;
  CalibrationMatch how = CalibrationMatch::none;
  calibration->collective_time_s(kind, CommGroup{m.size, m.ranks_per_node}, m.groups_per_node, 1, &how);
  if (how == CalibrationMatch::measured) return how;
  if (m.nccl_fitted && nccl_time(*m.nccl_fitted, kind, 1).time_s >= 0) return CalibrationMatch::nccl_model;
  return how;
}

std::vector<int> DeviceMesh::shape() const {
  std::vector<int> s;
  for (const MeshDim& d : dims) s.push_back(d.size);
  return s;
}

std::string DeviceMesh::shape_string() const {
  std::string s;
  for (const MeshDim& d : dims) s += (s.empty() ? "" : "x") + std::to_string(d.size);
  return s;
}

std::vector<int> parse_mesh_shape(const std::string& text, const std::string& flag) {
  std::vector<int> shape;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == 'x' || text[i] == 'X' || text[i] == ',') {
      const std::string part = text.substr(start, i - start);
      const std::optional<int64_t> v = integer_in(part, 1, ClusterSpec::kMaxGpus);
      if (!v) {
        throw InputError(flag, "", "expected sizes like 4x8 or 32, each in [1, " + std::to_string(ClusterSpec::kMaxGpus) +
                                       "], got '" + text + "'");
      }
      shape.push_back(static_cast<int>(*v));
      start = i + 1;
    }
  }
  if (shape.size() > static_cast<size_t>(kMaxMeshDims)) {
    throw InputError(flag, "", "at most " + std::to_string(kMaxMeshDims) + " mesh dimensions");
  }
  return shape;
}

DeviceMesh make_mesh(const ClusterSpec& c, const std::vector<int>& shape, const std::string& flag) {
  // A scheme's mesh may carry the pipeline's dim on top of kMaxMeshDims SBP dims (Megatron-Core
  // with expert parallelism: [pp, edp, ep, tp]); Scheme::sbp_shape() keeps within kMaxMeshDims.
  if (shape.empty() || shape.size() > static_cast<size_t>(kMaxMeshDims) + 1) {
    throw InputError(flag, "", "a mesh has 1 to " + std::to_string(kMaxMeshDims + 1) + " dimensions (at most " +
                                   std::to_string(kMaxMeshDims) + " besides a pipeline's)");
  }
  // Multiplied as a double (exact below 2^53), so no product of sizes wraps to a small count:
  // in int, 65536x65536 was 0 devices, and the check below divided by it.
  double product = 1;
  for (int s : shape) {
    if (s < 1) throw InputError(flag, "", "mesh sizes must be >= 1");
    product *= s;
  }
  if (product > c.total_gpus()) {
    char count[32];
    std::snprintf(count, sizeof count, "%.17g", product);
    throw InputError(flag, "", "mesh has " + std::string(count) + " devices but " + c.name + " has " +
                                   std::to_string(c.total_gpus()) + " GPUs (use --nodes)");
  }
  const int devices = static_cast<int>(product);
  const int g = c.gpus_per_node;
  if (!((devices <= g && g % devices == 0) || devices % g == 0)) {
    throw InputError(flag, "", "mesh of " + std::to_string(devices) +
                                   " devices does not fit nodes of " + std::to_string(g) + " GPUs");
  }
  DeviceMesh mesh;
  int stride = devices;
  const double intra_beta = c.intra_bw_bytes_per_s() > 0 ? 1.0 / c.intra_bw_bytes_per_s() : 0.0;
  for (size_t i = 0; i < shape.size(); ++i) {
    MeshDim d;
    d.size = shape[i];
    stride /= d.size;
    d.stride = stride;
    const int span = d.size * d.stride;  // GPU ids one group's block covers
    if (d.size == 1 || (span <= g && g % span == 0)) {
      d.ranks_per_node = d.size;
      d.groups_per_node = 1;
      d.crosses_nodes = false;
      d.tier = {c.intra.latency_s, intra_beta};
      d.a2a_tier = d.tier;
    } else if ((d.stride >= g && d.stride % g == 0) ||
               (d.stride < g && g % d.stride == 0 && span % g == 0)) {
      d.ranks_per_node = std::max(1, g / d.stride);
      d.groups_per_node = g / d.ranks_per_node;
      d.crosses_nodes = true;
      // A ring step crossing nodes pushes one chunk per group through the node's NICs, and
      // all groups_per_node groups of this dim do so at once; hops inside the node use NVLink.
      double beta_nic = d.groups_per_node / c.node_nic_bw_bytes_per_s();
      double beta = d.ranks_per_node > 1 ? std::max(intra_beta, beta_nic) : beta_nic;
      d.tier = {c.inter.latency_s, beta};
      // Pairwise exchange (collective.cpp's direct algorithm): of a rank's S bytes, (r−1)/p stay
      // on NVLink and (p−r)/p leave through the NICs all g GPUs of the node share; the slower
      // of the two, over the (p−1)/p of S the tier formula moves, is the per-byte cost.
      const double p = d.size, r = d.ranks_per_node;
      const double a2a_beta = std::max((r - 1) * intra_beta, (p - r) * g / c.node_nic_bw_bytes_per_s()) / (p - 1);
      d.a2a_tier = {std::max(c.intra.latency_s, c.inter.latency_s), a2a_beta};
    } else {
      throw InputError(flag, "", "mesh dim " + std::to_string(i) + " (size " + std::to_string(d.size) +
                                     ") does not align with nodes of " + std::to_string(g) + " GPUs");
    }
    if (c.nccl && d.size > 1) {
      // The dim's groups_per_node groups share the node's NICs (one NIC per GPU when rail-optimized).
      const CommGroup group{d.size, d.ranks_per_node};
      d.nccl = std::make_shared<const NcclTuning>(nccl_tuning(c, nccl_comm_for(c, group, d.groups_per_node)));
      if (c.calibration) {
        if (const NcclModelCalibration* fit = c.calibration->find_nccl_model(CollectiveKind::all_reduce, group, d.groups_per_node)) {
          d.nccl_fitted = std::make_shared<const NcclTuning>(apply_nccl_calibration(*d.nccl, *fit));
        }
      }
    }
    mesh.dims.push_back(d);
  }
  mesh.calibration = c.calibration;
  return mesh;
}

DeviceMesh default_mesh(const ClusterSpec& c) {
  std::vector<int> shape;
  if (c.nodes > 1) shape.push_back(c.nodes);
  if (c.gpus_per_node > 1) shape.push_back(c.gpus_per_node);
  if (shape.empty()) shape.push_back(1);
  return make_mesh(c, shape, "--mesh");
}

}  // namespace autoddl::costmodel
