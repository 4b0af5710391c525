// Program: the per-device task graph one training iteration is lowered to, and that the
// simulator executes. Each device (GPU) has a few in-order streams (CUDA-stream semantics:
// a task starts when it reaches the head of its stream and its dependencies are done);
// a collective occupies one stream on every participant and starts when all have reached it
// (NCCL's rendezvous), so a misordered program deadlocks here as it would on GPUs.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "autoddl/costmodel/collective.hpp"

namespace autoddl::sim {

using costmodel::CollectiveAlgo;
using costmodel::CollectiveKind;

using TaskId = int32_t;

// Stream indices every program has; a program may declare more (e.g. a separate stream for
// pipeline send/recv so it does not queue behind gradient sync).
inline constexpr int kComputeStream = 0;
inline constexpr int kCommStream = 1;

enum class TaskKind : uint8_t { compute, collective };

// Which part of the iteration a task belongs to; reports break time down by it. The
// executor itself ignores it.
enum class Phase : uint8_t { none, forward, backward, recompute, boxing, grad_sync, pipeline, optimizer };
std::string_view phase_name(Phase p);

// The framework overlap that runs a communication task beside compute, so reports can say how
// much of it the compute hid: Transformer Engine's tensor-parallel overlap (tp_overlap) or
// Megatron's pipeline p2p overlap (pp_overlap); on a compute task, a charge that overlap adds
// (tp_overlap's chunked GEMMs). The executor ignores it.
enum class Overlap : uint8_t { none, tp, pp };
std::string_view overlap_name(Overlap o);  // "none", "tp_overlap", "pp_overlap"

struct Task {
  TaskKind kind = TaskKind::compute;
  Phase phase = Phase::none;
  Overlap overlap = Overlap::none;
  int stream = kComputeStream;
  std::string name;
  // Participating devices. compute: exactly one. collective: the group in logical ring order
  // (for hierarchical, node-major with the same number of devices on each node);
  // send_recv: {src, dst}.
  std::vector<int> devices;
  // compute: time = seconds + flops / (the GPU's peak FLOP/s for the simulated dtype).
  // Compute tasks running at once on two streams of one device share its FLOP/s; transfers
  // do not slow compute (no interference model yet).
  double flops = 0;
  double seconds = 0;
  // collective: kind, algorithm and nccl-tests "size" in bytes (collective.hpp).
  CollectiveKind collective = CollectiveKind::all_reduce;
  CollectiveAlgo algo = CollectiveAlgo::ring;
  double bytes = 0;
  // collective: flows per node-crossing ring edge (NCCL channels, one NIC each); 0 = the
  // node's NIC count. A lowering whose groups share a node's NICs (g groups of a mesh dim run
  // at once) gives each nics/g, as costmodel's mesh tiers assume, with g times fewer flows.
  int channels = 0;
  // Tasks that must finish first (any device, any stream); always earlier ids.
  std::vector<TaskId> deps;
  // Free-form labels kept for traces and reports: micro-batch and pipeline stage, -1 if none.
  int micro_batch = -1;
  int stage = -1;
};

// Optional arguments of the Program builders; stream < 0 means the kind's default stream
// (compute for compute tasks, comm for collectives).
struct TaskOptions {
  std::vector<TaskId> deps = {};
  Phase phase = Phase::none;
  int stream = -1;
  std::string name = {};
  int micro_batch = -1;
  int stage = -1;
};

// Tasks are appended in program order: the order of the tasks of one stream is the order
// they were added, and dependencies point to earlier tasks. So every wait of a task (its
// dependencies, the tasks before it on its streams, its other participants reaching it) is
// on earlier tasks, and a Program cannot deadlock: emit tasks in any order in which a real
// run could start them (e.g. walk the schedule in time order). Builders check their
// arguments and throw InputError("program", "task <id> '<name>'", reason).
// The most streams (devices x streams per device) a Program holds: 2^25 empty stream lists are
// about 800 MB. Larger programs are refused with InputError("program", "streams", reason).
inline constexpr int64_t kMaxProgramStreams = int64_t{1} << 25;

class Program {
 public:
  explicit Program(int devices, int streams_per_device = 2);

  TaskId compute(int device, double flops, TaskOptions opt = {});
  TaskId compute_seconds(int device, double seconds, TaskOptions opt = {});
  TaskId collective(CollectiveKind kind, std::vector<int> devices, double bytes,
                    CollectiveAlgo algo = CollectiveAlgo::ring, TaskOptions opt = {});
  TaskId send_recv(int src, int dst, double bytes, TaskOptions opt = {});
  // Appends a fully specified task (lowering code that fills Task itself).
  TaskId add(Task t);

  int devices() const { return devices_; }
  int streams_per_device() const { return streams_; }
  int stream_count() const { return devices_ * streams_; }
  int stream_index(int device, int stream) const { return device * streams_ + stream; }
  const std::vector<Task>& tasks() const { return tasks_; }
  const Task& task(TaskId id) const { return tasks_[static_cast<size_t>(id)]; }
  size_t size() const { return tasks_.size(); }
  // Task ids of one stream in program order.
  const std::vector<TaskId>& stream_tasks(int device, int stream) const {
    return per_stream_[static_cast<size_t>(stream_index(device, stream))];
  }
  // The last task added to a stream, or -1: handy for "after whatever ran before" deps.
  TaskId last_on(int device, int stream) const;
  // What a stream index is for, as traces name it: "compute" and "comm" unless renamed
  // (e.g. "grad sync", "pipeline 0"), else "stream <i>".
  void set_stream_name(int stream, std::string name);
  std::string stream_name(int stream) const;

 private:
  int devices_;
  int streams_;
  std::vector<Task> tasks_;
  std::vector<std::vector<TaskId>> per_stream_;
  std::vector<std::string> stream_names_;
};

}  // namespace autoddl::sim
