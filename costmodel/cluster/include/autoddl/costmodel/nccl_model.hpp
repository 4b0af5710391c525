// NCCL's own cost model for all-reduce, all-gather and reduce-scatter: per algorithm (ring,
// tree, NVLS, NVLS-tree, PAT) and protocol (LL, LL128, Simple) a latency and a bandwidth with
// the structure and constants of NCCL's tuner (src/graph/tuning.cc), the channel graphs its
// topology search (src/graph/search.cc) finds on the cluster, the channel count it launches per
// size (src/enqueue.cc), and the choice of the fastest (algorithm, protocol) that NCCL makes.
// Used by collective_time() and the mesh dims whenever the cluster JSON has an `nccl` block
// (ClusterSpec::nccl); the formulas are written out in costmodel/cluster/src/nccl_model.cpp's header.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/collective.hpp"

namespace autoddl::costmodel {

enum class NcclAlgo : uint8_t { tree, ring, nvls, nvls_tree, pat };
enum class NcclProto : uint8_t { ll, ll128, simple };
inline constexpr int kNcclAlgoCount = 5;
inline constexpr int kNcclProtoCount = 3;
std::string_view nccl_algo_name(NcclAlgo a);    // "ring", "nvls_tree", ...
std::string_view nccl_proto_name(NcclProto p);  // "LL", "LL128", "Simple"
// The names NCCL_ALGO / NCCL_PROTO take, any case ("Ring", "NVLSTree" or "nvls_tree", "LL128",
// "Simple"); empty if the name is none of ours (CollNet is not modelled).
std::optional<NcclAlgo> parse_nccl_algo(std::string_view name);
std::optional<NcclProto> parse_nccl_proto(std::string_view name);
// The id of NCCL's algorithm in the collective algorithm table (collective.hpp).
CollectiveAlgo collective_algo_of(NcclAlgo a);

// A communicator as NCCL's tuner sees it: `ranks` GPUs, `ranks_per_node` on each node, and the
// NICs of a node this communicator may use (its share when other groups of the same mesh dim
// use the node's NICs at the same time; may be fractional).
struct NcclComm {
  int ranks = 1;
  int ranks_per_node = 1;
  double nics = 1;
  int nodes() const { return (ranks + ranks_per_node - 1) / ranks_per_node; }
};

// One channel graph of NCCL's topology search: channels and per-channel GB/s inside the node
// and over the network (NCCL_DEBUG_SUBSYS=GRAPH prints "Pattern .., nChannels .., bw ../..").
struct NcclGraph {
  int channels = 0;
  double bw_intra_GBps = 0;
  double bw_inter_GBps = 0;
};

// The tuner's table for one communicator: latency (us) and algorithm bandwidth (GB/s) per
// (collective kind, algorithm, protocol), 0 bandwidth = not available. Built once per group
// shape (a mesh dim builds its own), then priced per size without allocation.
struct NcclTuning {
  static constexpr int kKinds = 3;  // all_reduce, all_gather, reduce_scatter
  float lat_us[kKinds][kNcclAlgoCount][kNcclProtoCount] = {};
  float bw_GBps[kKinds][kNcclAlgoCount][kNcclProtoCount] = {};
  NcclGraph ring, nvls;
  int ranks = 1, nodes = 1;
  int arch = 0;                 // 0 Volta, 1 Ampere, 2 Hopper, 3 Blackwell
  int channels = 1;             // comm->nChannels: the ring graph's channels, duplicated (item 1)
  int nvls_channels = 0;        // channels NVLS kernels launch (NCCL_NVLS_NCHANNELS default)
  float chunk_lat_us = 0;       // latency per chunk round of NVLS kernels (nccl_model.cpp item 5)
};

// Throws std::logic_error (via AUTODDL_CHECK) if `c.nccl` is empty.
NcclTuning nccl_tuning(const ClusterSpec& c, const NcclComm& comm);

struct NcclEstimate {
  double time_s = -1;  // < 0: NCCL's model does not cover this kind (p2p) or group
  NcclAlgo algo = NcclAlgo::ring;
  NcclProto proto = NcclProto::simple;
  int channels = 0;  // channels launched for this size
};
// The (algorithm, protocol) NCCL picks for `bytes` (nccl-tests "size") and its time.
NcclEstimate nccl_time(const NcclTuning& t, CollectiveKind kind, double bytes);
// One (algorithm, protocol); time_s < 0 if unavailable.
NcclEstimate nccl_time(const NcclTuning& t, CollectiveKind kind, double bytes, NcclAlgo a, NcclProto p);
// What NCCL_ALGO and NCCL_PROTO allow (empty: any), as `comm` and `fit` take them.
struct NcclRestriction {
  std::optional<NcclAlgo> algo;
  std::optional<NcclProto> proto;
  bool any() const { return algo || proto; }
  std::string name() const;  // "ring", "LL128", "ring/LL128"
  std::string env() const;   // "NCCL_ALGO=ring, NCCL_PROTO=LL128"
  const char* option() const { return algo ? "--nccl-algo" : "--nccl-proto"; }  // the CLI option it came from
};

// NCCL's choice among the algorithms and protocols allowed, as with NCCL_ALGO and/or NCCL_PROTO
// naming one (empty: any); time_s < 0 if none of them is available for this communicator.
NcclEstimate nccl_choice(const NcclTuning& t, CollectiveKind kind, double bytes, const NcclRestriction& only);

// nccl_collective_time (collective.hpp) with the choice restricted as above, and no calibrated
// time (a calibration measured NCCL's own choice). Throws InputError(field, "", why) when the
// cluster has no nccl block, the kind is not NCCL's tuner's, or nothing allowed is available.
CollectiveEstimate nccl_collective_time(const ClusterSpec& c, CollectiveKind kind, const CommGroup& g, double bytes,
                                        const NcclRestriction& only);

}  // namespace autoddl::costmodel
