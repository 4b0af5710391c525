// Collective communication cost (α-β, "Hockney") for a group of ranks on a cluster.
// Byte counts follow nccl-tests: S is the "size" column, i.e. the all-reduce buffer, the full
// gathered (all_gather) or scattered (reduce_scatter) tensor, the whole per-rank buffer for
// all_to_all, and the message for send_recv. One table row per kind holds the ring algorithm's
// latency steps and bandwidth factor; the bandwidth factor is also nccl-tests' busbw factor
// (doc/PERFORMANCE.md), so the model and the measurements agree on what 2(n−1)/n means.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "autoddl/costmodel/cluster.hpp"

namespace autoddl::costmodel {

enum class CollectiveKind : uint8_t { all_reduce, all_gather, reduce_scatter, all_to_all, send_recv };
inline constexpr int kCollectiveKindCount = 5;

// A collective algorithm: a small id naming a row of collective_algos() (below); the same id
// keys the simulator's step generators (sim/collectives.hpp), so the algorithm a cost was
// priced with is the one the simulator runs. `calibrated`: a measured time from the cluster's
// calibration file replaced the models. nvls, nvls_tree and pat exist only in NCCL's model
// (clusters with an `nccl` block). register_collective_algo() adds ids after these.
enum class CollectiveAlgo : uint8_t { ring, tree, hierarchical, direct, nvls, nvls_tree, pat, calibrated };

struct CollectiveInfo {
  CollectiveKind kind;
  std::string_view name;              // "all_reduce"
  std::string_view nccl_tests_name;   // "all_reduce_perf"
  double (*latency_steps)(int p);     // α terms of the ring (or direct) algorithm
  double (*bw_factor)(int p);         // bytes each rank moves / S; = nccl-tests busbw factor
  CollectiveAlgo default_algo;        // what runs when no model picked one (ring; direct for p2p)
};

const std::vector<CollectiveInfo>& collective_kinds();
const CollectiveInfo& collective_info(CollectiveKind kind);
const CollectiveInfo* find_collective(std::string_view name);  // nullptr if unknown
std::string_view collective_algo_name(CollectiveAlgo a);

// One link tier as a collective sees it: per-message latency and seconds per byte per rank.
struct LinkTier {
  double alpha_s = 0;
  double beta_s_per_byte = 0;
};

// A flat 1-D collective on one tier: latency_steps(p)·α + bw_factor(p)·S·β. This is the
// per-device ring time of DESIGN.md's boxing table; p <= 1 costs 0.
double ring_time_s(CollectiveKind kind, int p, double bytes, const LinkTier& tier);

// Where a collective's ranks sit: `ranks` in total, `ranks_per_node` in each node (ranks are
// packed onto nodes in order, so ranks beyond one node span nodes).
struct CommGroup {
  int ranks = 1;
  int ranks_per_node = 1;
  int nodes() const { return (ranks + ranks_per_node - 1) / ranks_per_node; }
};
// The group of `ranks` consecutive GPUs of a cluster: ranks_per_node = min(ranks, gpus_per_node).
// Throws InputError("--ranks", "", ...) unless 1 <= ranks <= c.total_gpus().
CommGroup contiguous_group(const ClusterSpec& c, int ranks);

struct CollectiveEstimate {
  double time_s = 0;
  CollectiveAlgo algo = CollectiveAlgo::ring;
  std::string_view protocol;  // NCCL's protocol ("LL", "LL128", "Simple"); empty for α-β
  int channels = 0;           // NCCL's channels launched, one CTA (one SM) each; 0 for α-β/measured
};

// The one (collective kind, algorithm) table of the analytical model: one row per algorithm,
// each pricing every kind it applies to (a negative time = does not apply to that kind or
// group). collective_time() picks the fastest row for a group, a mesh dim
// (DeviceMesh::collective) the fastest row with a one-tier formula; the simulator keys its step
// generators by the same ids. Adding an algorithm: its formulas in one file (or test) and
// register_collective_algo(), plus a generator row on the sim side to simulate it.
struct CollectiveAlgoInfo {
  CollectiveAlgo algo{};  // set by the table (register_collective_algo writes the new id)
  std::string_view name;  // "ring"
  // α-β time of one group on the cluster; nullptr = not an α-β algorithm (NCCL-only, calibrated).
  double (*group_time_s)(const ClusterSpec& c, CollectiveKind kind, const CommGroup& g, double bytes) = nullptr;
  // Time of a 1-D collective of p ranks on one link tier (a mesh dim's); nullptr = mesh dims do
  // not price with it (tree and hierarchical need the group's node structure).
  double (*tier_time_s)(CollectiveKind kind, int p, double bytes, const LinkTier& tier) = nullptr;
};
const std::vector<CollectiveAlgoInfo>& collective_algos();
const CollectiveAlgoInfo* find_collective_algo(CollectiveAlgo algo);  // nullptr if unknown
// Adds an algorithm at run time (test code's toy algorithms) and returns its id, also written
// into the stored row. Not thread-safe: register before anything prices collectives. Throws
// std::logic_error (AUTODDL_CHECK) for an empty or taken name, or no formula at all.
CollectiveAlgo register_collective_algo(CollectiveAlgoInfo info);
// Removes the algorithm registered last (a test's toy, after the test); `algo` must be it.
void unregister_collective_algo(CollectiveAlgo algo);
// The fastest row with a tier formula for a 1-D collective of p ranks on `tier` (0 for p <= 1).
CollectiveEstimate tier_collective_time(CollectiveKind kind, int p, double bytes, const LinkTier& tier);


// Time of one α-β algorithm; returns a negative time when the algorithm does not apply
// (ring: all but all_to_all and send_recv; tree: all_reduce over > 1 node; hierarchical:
// all_reduce, all_gather, reduce_scatter over > 1 node with > 1 rank per node; direct:
// all_to_all (pairwise) and send_recv). Formulas: costmodel/cluster/src/collective.cpp's header.
double collective_algo_time_s(const ClusterSpec& c, CollectiveKind kind, CollectiveAlgo algo,
                              const CommGroup& g, double bytes);
// The fastest applicable α-β algorithm, as NCCL's tuner picks the fastest of its models; when
// the cluster's calibration measured this (kind, ranks, ranks per node), the measured time.
CollectiveEstimate collective_time(const ClusterSpec& c, CollectiveKind kind, const CommGroup& g,
                                   double bytes);
// NCCL's own model (nccl_model.hpp: its algorithms, protocols, channels and choice) for
// all-reduce, all-gather and reduce-scatter on a cluster with an `nccl` block; the measured
// time where calibrated; collective_time() for p2p kinds and clusters without the block.
// `autoddl comm` prints this; the mesh dims (mesh.hpp) and the simulator's time targets use
// the same model.
CollectiveEstimate nccl_collective_time(const ClusterSpec& c, CollectiveKind kind, const CommGroup& g,
                                        double bytes);

// nccl-tests' bandwidth columns: algbw = S / t, busbw = algbw · bw_factor(p); GB = 1e9 bytes.
// A zero time (a 1-rank group) gives 0, not infinity.
double algbw_GBps(double bytes, double time_s);
double busbw_GBps(CollectiveKind kind, int p, double bytes, double time_s);

}  // namespace autoddl::costmodel
