// Public entry points of the simulator: run a Program (program.hpp) on a ClusterSpec with
// SimGrid 3.32 and report what happened, or time one collective for `autoddl comm --sim`.
// No SimGrid type appears here, so callers (CLI, search) need no SimGrid headers.
//
// SimGrid's Engine is a process singleton in 3.32 (a second Engine in one process dies with
// "Cannot change the model after the initialization", and some zone builders keep static
// counters), so by default every simulation runs in a forked child that returns its result
// through a pipe: callers may simulate as often as they like. Isolation::in_process runs in
// the calling process instead, once per process (examples, profiling, debuggers).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/collective.hpp"
#include "autoddl/costmodel/dtype.hpp"
#include "autoddl/sim/program.hpp"

namespace autoddl::sim {

// step: every algorithm step is its own set of flows (ring: 2(p-1) rounds), accurate under
// contention. flow: one flow per rank per collective phase carrying the phase's bytes, plus
// the phase's remaining latency terms as a wait; identical when uncontended, far fewer events.
enum class Fidelity : uint8_t { flow, step };
std::string_view fidelity_name(Fidelity f);
bool parse_fidelity(std::string_view text, Fidelity& out);

enum class Isolation : uint8_t { fork, in_process };

struct SimOptions {
  Fidelity fidelity = Fidelity::step;
  costmodel::DType dtype = costmodel::DType::fp16;  // picks the GPU's peak FLOP/s (simulate_scheme: the plan's)
  int busiest_links = 10;                           // how many links SimResult lists
  Isolation isolation = Isolation::fork;
  // Extra SimGrid command-line options, e.g. "--log=autoddl_sim.thres:debug".
  std::vector<std::string> simgrid_args;
};

struct TaskTiming {
  double start_s = 0;  // when the task began (collectives: when the last participant arrived)
  double end_s = 0;
};

struct StreamUse {
  int device = 0;
  int stream = 0;
  double busy_s = 0;  // time some task of this stream ran
};

struct DeviceUse {
  double compute_s = 0;       // time a compute task ran on the device
  double comm_s = 0;          // time a collective involving the device ran
  double exposed_comm_s = 0;  // time a collective ran while no compute did
  double idle_s = 0;          // iteration time with neither
};

struct LinkUse {
  std::string name;
  double bytes = 0;
  double bw_bytes_per_s = 0;
  double utilization = 0;  // bytes / (bandwidth · iteration time)
};

struct SimResult {
  double iteration_s = 0;
  double compute_s = 0;       // max over devices of DeviceUse::compute_s
  double comm_s = 0;          // max over devices of DeviceUse::comm_s
  double exposed_comm_s = 0;  // max over devices of DeviceUse::exposed_comm_s
  std::vector<StreamUse> streams;   // one per stream that ran a task
  std::vector<DeviceUse> devices;   // indexed by device
  std::vector<LinkUse> busiest_links;  // by utilization, highest first
  int64_t events = 0;          // simulated activities (transfers, computations, waits)
  double wall_s = 0;           // wall-clock seconds of the simulation itself
  std::vector<TaskTiming> tasks;  // indexed by TaskId
};

nlohmann::json sim_result_to_json(const SimResult& r, bool with_tasks = true);
SimResult sim_result_from_json(const nlohmann::json& j);

// Runs the program. Throws InputError("program", ...) for a program this cluster cannot run
// (more devices than GPUs, an algorithm the simulator lacks or that does not apply to the
// group) or ("cluster", ...) for a cluster the platform builder rejects.
SimResult simulate(const Program& program, const costmodel::ClusterSpec& cluster,
                   const SimOptions& options = {});

// Time of one collective over `ranks` consecutive GPUs (as costmodel::contiguous_group),
// uncontended; send_recv goes from rank 0 to rank ranks-1. Without `algo`, the algorithm
// costmodel::collective_time picks, when the simulator has it (else the kind's default), so
// `autoddl comm --sim` compares like with like.
double simulate_collective(const costmodel::ClusterSpec& cluster, costmodel::CollectiveKind kind,
                           int ranks, double bytes, Fidelity fidelity,
                           std::optional<costmodel::CollectiveAlgo> algo = std::nullopt);
// The same for many sizes in one simulation (one fork), in order; for nccl-tests-like tables.
std::vector<double> simulate_collective_sweep(
    const costmodel::ClusterSpec& cluster, costmodel::CollectiveKind kind, int ranks,
    const std::vector<double>& sizes_bytes, Fidelity fidelity,
    std::optional<costmodel::CollectiveAlgo> algo = std::nullopt);

// The program simulate_collective_sweep runs: one collective per size, each after the last.
Program collective_sweep_program(const costmodel::ClusterSpec& cluster,
                                 costmodel::CollectiveKind kind, int ranks,
                                 const std::vector<double>& sizes_bytes,
                                 std::optional<costmodel::CollectiveAlgo> algo = std::nullopt);

}  // namespace autoddl::sim
