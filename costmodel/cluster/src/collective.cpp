// Collective cost (α-β, Hockney) per algorithm, and NCCL-style choice of the fastest one.
// Follows Thakur, Rabenseifner & Gropp 2005 for the ring/pairwise formulas, NCCL's
// src/graph/tuning.cc for tree vs ring, and nccl-tests' doc/PERFORMANCE.md for byte counts
// and busbw factors. p ranks, g ranks per node, n nodes, S nccl-tests bytes.
//
// Ring table (one row per kind; bw_factor is also nccl-tests' busbw factor):
//   all_reduce      steps 2(p−1)  factor 2(p−1)/p      all_gather, reduce_scatter, all_to_all
//   send_recv       steps 1       factor 1             steps p−1, factor (p−1)/p
//   ring_time_s = steps·α + factor·S·β on one tier; 0 for p <= 1.
// Tiers: intra α_i = intra.latency_s, β_i = 1/(intra.bw·intra.eff);
//        inter α_o = inter.latency_s, node NIC bandwidth B_n = nics·nic_bw·inter.eff.
//   Ring step bottleneck (n > 1): α_r = max(α_i, α_o), β_r = 1/min(intra bw, B_n)
//   (g = 1: α_r = α_o, β_r = 1/B_n); one node: α_r = α_i, β_r = β_i.
// Algorithms (a negative time = does not apply):
//   ring          AR, AG, RS:  ring_time_s(kind, p, S, {α_r, β_r})
//   tree          AR, n > 1:   2·(⌈log2 n⌉·α_o + (g−1)·α_i) + 2·S·β_r  (NCCL double binary tree;
//                 about the ring's bandwidth, far fewer latency steps)
//   hierarchical  n > 1, g > 1, β_e = g/B_n (the g ranks of a node share its NICs):
//                 AR = ring RS(g, S, intra) + ring AR(n, S/g, {α_o, β_e}) + ring AG(g, S, intra)
//                 AG = ring AG(n, S/g, {α_o, β_e}) + ring AG(g, S, intra); RS = the mirror
//   direct        A2A (pairwise), one node: ring_time_s on the intra tier; n > 1:
//                 (p−1)·max(α_i, α_o) + max((g−1)/p·S·β_i, (p−g)/p·S·β_e)
//                 send_recv (each rank sends S to the next), one node: α_i + S·β_i; n > 1:
//                 α_r + S/min(intra bw, nic_bw·inter.eff) (one flow through one NIC; g = 1: no
//                 intra hop)
// The model assumes full bisection (topology and oversubscription are the simulator's job).
#include "autoddl/costmodel/collective.hpp"
#include "autoddl/costmodel/calibration.hpp"
#include "autoddl/costmodel/collective_factors.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/nccl_model.hpp"

namespace autoddl::costmodel {
namespace {

// NCCL's model covers these kinds on clusters with an `nccl` block; p2p stays α-β.
bool nccl_prices(const ClusterSpec& c, CollectiveKind kind) {
  return c.nccl && (kind == CollectiveKind::all_reduce || kind == CollectiveKind::all_gather ||
                    kind == CollectiveKind::reduce_scatter);
}

// NCCL's estimate in the collective table's terms.
CollectiveEstimate estimate_of(const NcclEstimate& e) {
  return {e.time_s, collective_algo_of(e.algo), nccl_proto_name(e.proto), e.channels};
}

using namespace collective_factors;  // the table's steps and factors (collective_factors.hpp)

// 1/bandwidth, infinite for a zero bandwidth (a tier that does not exist).
double inverse(double bw_bytes_per_s) {
  return bw_bytes_per_s > 0 ? 1.0 / bw_bytes_per_s : std::numeric_limits<double>::infinity();
}

int ceil_log2(int n) {
  int steps = 0;
  for (int span = 1; span < n; span *= 2) ++steps;
  return steps;
}

// The group as the formulas see it: p ranks, g per node (<= p), n nodes.
struct Shape {
  int p, g, n;
};
Shape shape_of(const CommGroup& grp) {
  AUTODDL_CHECK(grp.ranks_per_node >= 1) << "ranks_per_node " << grp.ranks_per_node;
  int g = std::min(grp.ranks_per_node, std::max(grp.ranks, 1));
  return {grp.ranks, g, grp.nodes()};
}

LinkTier intra_tier(const ClusterSpec& c) {
  return {c.intra.latency_s, inverse(c.intra_bw_bytes_per_s())};
}

// The slowest hop of a ring (or a neighbour exchange) laid over the group.
LinkTier ring_tier(const ClusterSpec& c, const Shape& s) {
  if (s.n <= 1) return intra_tier(c);
  if (s.g <= 1) return {c.inter.latency_s, inverse(c.node_nic_bw_bytes_per_s())};
  return {std::max(c.intra.latency_s, c.inter.latency_s),
          inverse(std::min(c.intra_bw_bytes_per_s(), c.node_nic_bw_bytes_per_s()))};
}

// Inter-node tier seen by each of the g ranks of a node when all of them talk at once.
LinkTier shared_nic_tier(const ClusterSpec& c, const Shape& s) {
  return {c.inter.latency_s, s.g * inverse(c.node_nic_bw_bytes_per_s())};
}

double ring_algo(const ClusterSpec& c, CollectiveKind kind, const Shape& s, double bytes) {
  if (kind == CollectiveKind::all_to_all || kind == CollectiveKind::send_recv) return -1;
  return ring_time_s(kind, s.p, bytes, ring_tier(c, s));
}

double tree_algo(const ClusterSpec& c, CollectiveKind kind, const Shape& s, double bytes) {
  if (kind != CollectiveKind::all_reduce || s.n <= 1) return -1;
  LinkTier r = ring_tier(c, s);
  return 2.0 * (ceil_log2(s.n) * c.inter.latency_s + (s.g - 1) * c.intra.latency_s) +
         2.0 * bytes * r.beta_s_per_byte;
}

double hierarchical_algo(const ClusterSpec& c, CollectiveKind kind, const Shape& s,
                         double bytes) {
  if (s.n <= 1 || s.g <= 1) return -1;
  LinkTier in = intra_tier(c), out = shared_nic_tier(c, s);
  double shard = bytes / s.g;
  switch (kind) {
    case CollectiveKind::all_reduce:
      return ring_time_s(CollectiveKind::reduce_scatter, s.g, bytes, in) +
             ring_time_s(CollectiveKind::all_reduce, s.n, shard, out) +
             ring_time_s(CollectiveKind::all_gather, s.g, bytes, in);
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
      return ring_time_s(kind, s.n, shard, out) + ring_time_s(kind, s.g, bytes, in);
    default:
      return -1;
  }
}

double direct_algo(const ClusterSpec& c, CollectiveKind kind, const Shape& s, double bytes) {
  if (s.p <= 1) {
    return (kind == CollectiveKind::all_to_all || kind == CollectiveKind::send_recv) ? 0 : -1;
  }
  if (kind == CollectiveKind::all_to_all) {
    if (s.n <= 1) return ring_time_s(kind, s.p, bytes, intra_tier(c));
    double alpha = std::max(c.intra.latency_s, c.inter.latency_s);
    double intra_s = s.g > 1 ? (s.g - 1.0) / s.p * bytes * intra_tier(c).beta_s_per_byte : 0.0;
    double inter_s = double(s.p - s.g) / s.p * bytes * shared_nic_tier(c, s).beta_s_per_byte;
    return (s.p - 1) * alpha + std::max(intra_s, inter_s);
  }
  if (kind == CollectiveKind::send_recv) {
    if (s.n <= 1) return ring_time_s(kind, s.p, bytes, intra_tier(c));
    double one_flow_bw = c.inter.nic_bw_bytes_per_s * c.inter.efficiency;
    if (s.g > 1) one_flow_bw = std::min(one_flow_bw, c.intra_bw_bytes_per_s());
    return ring_tier(c, s).alpha_s + bytes * inverse(one_flow_bw);
  }
  return -1;
}

// A formula on the group's shape, as a row's group_time_s.
template <double (*F)(const ClusterSpec&, CollectiveKind, const Shape&, double)>
double on_group(const ClusterSpec& c, CollectiveKind kind, const CommGroup& g, double bytes) {
  return F(c, kind, shape_of(g), bytes);
}

// One tier (a mesh dim): the ring for all but p2p kinds, which exchange directly; both are
// ring_time_s with the kind's steps and factor.
bool p2p(CollectiveKind kind) { return kind == CollectiveKind::all_to_all || kind == CollectiveKind::send_recv; }
double ring_on_tier(CollectiveKind kind, int p, double bytes, const LinkTier& tier) {
  return p2p(kind) ? -1 : ring_time_s(kind, p, bytes, tier);
}
double direct_on_tier(CollectiveKind kind, int p, double bytes, const LinkTier& tier) {
  return p2p(kind) ? ring_time_s(kind, p, bytes, tier) : -1;
}

// The table: every algorithm, in the order ties are broken; registered rows follow. Reserved
// for every id, so registering never moves a row.
std::vector<CollectiveAlgoInfo>& algo_table() {
  static std::vector<CollectiveAlgoInfo> rows = [] {
    std::vector<CollectiveAlgoInfo> r;
    r.reserve(256);
    r.push_back({CollectiveAlgo::ring, "ring", on_group<ring_algo>, ring_on_tier});
    r.push_back({CollectiveAlgo::tree, "tree", on_group<tree_algo>});
    r.push_back({CollectiveAlgo::hierarchical, "hierarchical", on_group<hierarchical_algo>});
    r.push_back({CollectiveAlgo::direct, "direct", on_group<direct_algo>, direct_on_tier});
    // NCCL-only algorithms (priced by nccl_model.hpp, never by α-β) print NCCL's names.
    r.push_back({CollectiveAlgo::nvls, nccl_algo_name(NcclAlgo::nvls)});
    r.push_back({CollectiveAlgo::nvls_tree, nccl_algo_name(NcclAlgo::nvls_tree)});
    r.push_back({CollectiveAlgo::pat, nccl_algo_name(NcclAlgo::pat)});
    r.push_back({CollectiveAlgo::calibrated, "calibrated"});
    return r;
  }();
  return rows;
}

// The cluster calibration's measured time for this (kind, ranks, ranks per node), if any.
std::optional<CollectiveEstimate> calibrated_time(const ClusterSpec& c, CollectiveKind kind,
                                                  const CommGroup& g, double bytes) {
  if (!c.calibration) return std::nullopt;
  const double t = c.calibration->collective_time_s(kind, g, bytes);
  if (t < 0) return std::nullopt;
  return CollectiveEstimate{t, CollectiveAlgo::calibrated, {}};
}

// The NICs a group's communicator may use: rail-optimized nodes give each GPU its own NIC
// share, so ranks_per_node of gpus_per_node GPUs use that fraction of the node's NICs.
NcclComm nccl_comm_of(const ClusterSpec& c, const CommGroup& g) {
  const int local = std::clamp(g.ranks_per_node, 1, std::max(g.ranks, 1));
  return {g.ranks, local, double(c.inter.nics_per_node) * local / std::max(c.gpus_per_node, 1)};
}

}  // namespace

const std::vector<CollectiveInfo>& collective_kinds() {
  static const std::vector<CollectiveInfo> table = {
      {CollectiveKind::all_reduce, "all_reduce", "all_reduce_perf", ar_steps, ar_factor, CollectiveAlgo::ring},
      {CollectiveKind::all_gather, "all_gather", "all_gather_perf", ring_steps, ring_factor, CollectiveAlgo::ring},
      {CollectiveKind::reduce_scatter, "reduce_scatter", "reduce_scatter_perf", ring_steps,
       ring_factor, CollectiveAlgo::ring},
      {CollectiveKind::all_to_all, "all_to_all", "alltoall_perf", ring_steps, ring_factor, CollectiveAlgo::direct},
      {CollectiveKind::send_recv, "send_recv", "sendrecv_perf", one, one, CollectiveAlgo::direct},
  };
  return table;
}

const CollectiveInfo& collective_info(CollectiveKind kind) {
  for (const CollectiveInfo& row : collective_kinds()) {
    if (row.kind == kind) return row;
  }
  AUTODDL_CHECK(false) << "collective kind " << int(kind) << " has no row";
  return collective_kinds().front();
}

const CollectiveInfo* find_collective(std::string_view name) {
  for (const CollectiveInfo& row : collective_kinds()) {
    if (row.name == name) return &row;
  }
  return nullptr;
}

std::string_view collective_algo_name(CollectiveAlgo a) {
  const CollectiveAlgoInfo* row = find_collective_algo(a);
  return row ? row->name : "?";
}

CollectiveAlgo collective_algo_of(NcclAlgo a) {
  switch (a) {
    case NcclAlgo::tree: return CollectiveAlgo::tree;
    case NcclAlgo::ring: return CollectiveAlgo::ring;
    case NcclAlgo::nvls: return CollectiveAlgo::nvls;
    case NcclAlgo::nvls_tree: return CollectiveAlgo::nvls_tree;
    case NcclAlgo::pat: return CollectiveAlgo::pat;
  }
  return CollectiveAlgo::ring;
}

const std::vector<CollectiveAlgoInfo>& collective_algos() { return algo_table(); }

const CollectiveAlgoInfo* find_collective_algo(CollectiveAlgo algo) {
  const auto& rows = algo_table();
  const auto i = static_cast<size_t>(algo);
  return i < rows.size() ? &rows[i] : nullptr;
}

CollectiveAlgo register_collective_algo(CollectiveAlgoInfo info) {
  std::vector<CollectiveAlgoInfo>& rows = algo_table();
  AUTODDL_CHECK(rows.size() < 256) << "collective algorithms are uint8_t ids: 256 at most";
  AUTODDL_CHECK(info.group_time_s || info.tier_time_s) << "collective algorithm '" << info.name << "' has no formula";
  for (const CollectiveAlgoInfo& row : rows) {
    AUTODDL_CHECK(!info.name.empty() && row.name != info.name) << "collective algorithm name '" << info.name
                                                               << "' is empty or taken";
  }
  info.algo = static_cast<CollectiveAlgo>(rows.size());
  rows.push_back(info);
  return info.algo;
}

void unregister_collective_algo(CollectiveAlgo algo) {
  std::vector<CollectiveAlgoInfo>& rows = algo_table();
  AUTODDL_CHECK(rows.back().algo == algo && algo > CollectiveAlgo::calibrated)
      << "only the collective algorithm registered last can be removed";
  rows.pop_back();
}

CollectiveEstimate tier_collective_time(CollectiveKind kind, int p, double bytes, const LinkTier& tier) {
  if (p <= 1) return {0, collective_info(kind).default_algo, {}};
  CollectiveEstimate best{-1, CollectiveAlgo::ring, {}};
  for (const CollectiveAlgoInfo& row : algo_table()) {
    if (!row.tier_time_s) continue;
    const double t = row.tier_time_s(kind, p, bytes, tier);
    if (t >= 0 && (best.time_s < 0 || t < best.time_s)) best = {t, row.algo, {}};
  }
  AUTODDL_CHECK(best.time_s >= 0) << "no algorithm prices " << collective_info(kind).name << " on a mesh dim";
  return best;
}

double ring_time_s(CollectiveKind kind, int p, double bytes, const LinkTier& tier) {
  if (p <= 1) return 0;
  const CollectiveInfo& info = collective_info(kind);
  return info.latency_steps(p) * tier.alpha_s + info.bw_factor(p) * bytes * tier.beta_s_per_byte;
}

CommGroup contiguous_group(const ClusterSpec& c, int ranks) {
  if (ranks < 1) throw InputError("--ranks", "", "must be >= 1 (got " + std::to_string(ranks) + ")");
  if (ranks > c.total_gpus()) {
    throw InputError("--ranks", "",
                     "must be <= " + std::to_string(c.total_gpus()) + ", the GPUs of cluster '" +
                         c.name + "' (" + std::to_string(c.nodes) + " nodes x " +
                         std::to_string(c.gpus_per_node) + "; --nodes adds more) (got " +
                         std::to_string(ranks) + ")");
  }
  return {ranks, std::min(ranks, c.gpus_per_node)};
}

double collective_algo_time_s(const ClusterSpec& c, CollectiveKind kind, CollectiveAlgo algo,
                              const CommGroup& g, double bytes) {
  AUTODDL_CHECK(bytes >= 0) << "bytes " << bytes;
  const CollectiveAlgoInfo* row = find_collective_algo(algo);
  return row && row->group_time_s ? row->group_time_s(c, kind, g, bytes) : -1;
}

CollectiveEstimate collective_time(const ClusterSpec& c, CollectiveKind kind, const CommGroup& g,
                                   double bytes) {
  if (const auto measured = calibrated_time(c, kind, g, bytes)) return *measured;
  CollectiveEstimate best{-1, CollectiveAlgo::ring, {}};
  AUTODDL_CHECK(bytes >= 0) << "bytes " << bytes;
  for (const CollectiveAlgoInfo& row : algo_table()) {
    if (!row.group_time_s) continue;
    double t = row.group_time_s(c, kind, g, bytes);
    if (t >= 0 && (best.time_s < 0 || t < best.time_s)) best = {t, row.algo, {}};
  }
  AUTODDL_CHECK(best.time_s >= 0) << "no algorithm applies to " << collective_info(kind).name;
  return best;
}

CollectiveEstimate nccl_collective_time(const ClusterSpec& c, CollectiveKind kind, const CommGroup& g,
                                        double bytes) {
  if (!nccl_prices(c, kind)) return collective_time(c, kind, g, bytes);
  if (const auto measured = calibrated_time(c, kind, g, bytes)) return *measured;
  AUTODDL_CHECK(bytes >= 0) << "bytes " << bytes;
  const NcclEstimate e = nccl_time(nccl_tuning(c, nccl_comm_of(c, g)), kind, bytes);
  AUTODDL_CHECK(e.time_s >= 0) << "NCCL's model has no algorithm for " << collective_info(kind).name;
  return estimate_of(e);
}

CollectiveEstimate nccl_collective_time(const ClusterSpec& c, CollectiveKind kind, const CommGroup& g, double bytes,
                                        const NcclRestriction& only) {
  if (!c.nccl) {
    throw InputError(only.option(), "", "cluster '" + c.name + "' has no nccl block, so NCCL's model has no constants for it");
  }
  if (!nccl_prices(c, kind)) {
    throw InputError(only.option(), "", std::string(collective_info(kind).name) +
                                            " is not one of NCCL's tuned collectives (all_reduce, all_gather, reduce_scatter)");
  }
  AUTODDL_CHECK(bytes >= 0) << "bytes " << bytes;
  const NcclEstimate e = nccl_choice(nccl_tuning(c, nccl_comm_of(c, g)), kind, bytes, only);
  if (e.time_s < 0) {
    throw InputError(only.option(), only.name(),
                     "NCCL has no " + only.name() + " " + std::string(collective_info(kind).name) + " for " +
                         std::to_string(g.ranks) + " ranks, " + std::to_string(g.ranks_per_node) + " per node, on " +
                         c.name + " (nccl_model.cpp's header: which algorithms and protocols each needs)");
  }
  return estimate_of(e);
}

double algbw_GBps(double bytes, double time_s) { return time_s > 0 ? bytes / time_s / 1e9 : 0; }

double busbw_GBps(CollectiveKind kind, int p, double bytes, double time_s) {
  return algbw_GBps(bytes, time_s) * collective_info(kind).bw_factor(p);
}

}  // namespace autoddl::costmodel
