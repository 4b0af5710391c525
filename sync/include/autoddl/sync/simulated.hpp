// SimGrid evaluator of one strategy (built only with sim/; AUTODDL_SYNC_HAVE_SIM): the strategy's
// iteration lowered to a sim::Program and run by the simulator, so that transfers contend for
// real. It is this module's "real run" on machines without GPUs.
//
// * Every GPU runs forward, then backward in segments that end where a variable's gradient
//   becomes ready (the same compute model and ready points as the analytical evaluator).
// * All-reduce groups: one collective per group over all GPUs on the comm stream, in
//   gradient-ready order, after the segment that completes the group (sparse members: an
//   all-gather of their touched rows and indices).
// * PS, as AutoDist's PSSynchronizer moves a shard (sync/src/ps_flows.hpp, sync_emit.hpp): sim/
//   has GPU hosts only, so a server is the first GPU of its node, which sits behind the same
//   node NIC as the node's CPU would. Each node sums its GPUs' gradients (an intra-node
//   collective on its first GPU, the node's CPU here) and pushes the sum once to the server
//   with a send/recv on the stream of the pair (node's first GPU, server), so a node talks to
//   all servers at once and the pushes of all nodes reach a server at once and share its NIC
//   (incast); once all pushes of a shard arrived (synchronous; asynchronous: once the node's
//   own push did), the server returns it to every GPU of the node, or with local replication
//   to its proxy (the first GPU) which copies it into the others (an intra-node all-gather);
//   a pair's shards go one after another.
// * Jitter, seeded (std::mt19937_64): each compute task's time and each transfer's bytes are
//   scaled by max(0.5, 1 + σ·N(0,1)), so repeated "runs" (seeds) differ as real runs do; σ = 0
//   gives the deterministic simulation.
// * SimGrid's network model re-solves the whole max-min sharing problem at every event
//   (network/optim:Full) rather than its default lazy update of only the constraints an event
//   touched: every flow of a strategy shares NICs and ports with the others, so the lazy
//   update's bookkeeping saves nothing here and cost 1.36x the CPU (the 10,080-record dataset:
//   1,704 CPU-s lazy, 1,252 CPU-s full), and its results moved with
//   SimGrid's precision settings more than the full re-solve's (docs/sync-strategy-json.md).
#pragma once
#include <cstdint>
#include <vector>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/graph.hpp"
#include "autoddl/sync/strategy.hpp"

namespace autoddl::sync {

struct SimSyncOptions {
  uint64_t seed = 1;
  double compute_jitter = 0.02;  // σ of the per-task compute factor
  double network_jitter = 0.05;  // σ of the per-transfer bytes factor
  // Collectives as one flow per rank and phase (sim::Fidelity::flow) instead of every ring
  // step: identical uncontended, far fewer events (32-GPU all-reduces dominate otherwise).
  // The one fidelity of `sync evaluate --sim`, `sync search` and `sync dataset` (they keep this
  // default), so the three give one strategy the same time; step fidelity is for tests.
  bool flow_fidelity = true;
  // Runs of the iteration, run r jittered by seed + r (one simulation each); the result's
  // iteration_s is their mean.
  int runs = 1;
};

struct SimSyncResult {
  double iteration_s = 0;      // the mean of runs_s
  std::vector<double> runs_s;  // each run's iteration
  int simulations = 0;         // SimGrid simulations it took
  double compute_s = 0;        // the busiest GPU's compute time
  double exposed_comm_s = 0;   // the worst GPU's communication time with no compute running
  int64_t transfers = 0;       // send/recv and collective tasks of one run
  double wall_s = 0;           // wall-clock seconds of the simulations
};

// The largest cluster a strategy is simulated on (`sync evaluate --sim`, `sync search`): its
// program has a stream per (worker GPU, server node) on every GPU, GPUs x GPUs x nodes in all,
// so memory and time grow with the cube (`sync search --nodes 1000` on autosync-a grew to 9 GB
// in 30 s, where `simulate`'s 8192-GPU limit never applied). Nodes and GPUs are both capped: a
// cluster of many GPUs per node is bounded by GPUs, one of one GPU per node by nodes. At the
// caps one simulation takes seconds and about 100 MB (ncf: 256 GPUs on 32 dgx-a100 nodes 4 s,
// 128 autosync-a nodes 2 s; vgg16 on those 9 s), and 256 x 256 x 128 streams stay well inside
// sim::kMaxProgramStreams.
inline constexpr int kMaxSyncSimNodes = 128;
inline constexpr int kMaxSyncSimGpus = 256;
// Throws InputError("simulator", "cluster", reason) when `c` is larger than that.
void check_sync_sim_cluster(const costmodel::ClusterSpec& c);

// `s` must have passed validate_strategy. Throws InputError for a program the simulator
// cannot run (an algorithm that does not apply to the cluster, a cluster over the limits).
SimSyncResult simulate_strategy(const costmodel::Graph& g, const std::vector<Variable>& vars,
                                const Strategy& s, const costmodel::ClusterSpec& c,
                                const SimSyncOptions& options = {});

}  // namespace autoddl::sync
