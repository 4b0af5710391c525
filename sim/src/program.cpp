// Program builders (see program.hpp): argument checks, and per-stream task lists in program
// order.
#include "autoddl/sim/program.hpp"

#include <set>
#include <string>

#include "autoddl/costmodel/error.hpp"

namespace autoddl::sim {

std::string_view phase_name(Phase p) {
  switch (p) {
    case Phase::none: return "none";
    case Phase::forward: return "forward";
    case Phase::backward: return "backward";
    case Phase::recompute: return "recompute";
    case Phase::boxing: return "boxing";
    case Phase::grad_sync: return "grad_sync";
    case Phase::pipeline: return "pipeline";
    case Phase::optimizer: return "optimizer";
  }
  return "none";
}

std::string_view overlap_name(Overlap o) {
  switch (o) {
    case Overlap::none: return "none";
    case Overlap::tp: return "tp_overlap";
    case Overlap::pp: return "pp_overlap";
  }
  return "none";
}

namespace {
std::string task_field(TaskId id, const std::string& name) {
  return "task " + std::to_string(id) + (name.empty() ? "" : " '" + name + "'");
}
}  // namespace

Program::Program(int devices, int streams_per_device) : devices_(devices), streams_(streams_per_device) {
  if (devices < 1) throw InputError("program", "devices", "must be >= 1");
  if (streams_per_device < 2) throw InputError("program", "streams_per_device", "must be >= 2");
  // Every stream costs its list up front: a sync strategy's PS lanes (GPUs x GPUs x nodes) once
  // asked for billions and died of std::bad_alloc; int stream indices must not overflow either.
  const int64_t streams = int64_t{devices} * streams_per_device;
  if (streams > kMaxProgramStreams) {
    throw InputError("program", "streams",
                     std::to_string(devices) + " devices x " + std::to_string(streams_per_device) +
                         " streams each is more than the simulator's " + std::to_string(kMaxProgramStreams) +
                         " streams (a smaller cluster)");
  }
  per_stream_.resize(static_cast<size_t>(streams));
}

namespace {
Task compute_task(int device, double flops, double seconds, TaskOptions&& opt) {
  Task t;
  t.kind = TaskKind::compute;
  t.devices = {device};
  t.flops = flops;
  t.seconds = seconds;
  t.phase = opt.phase;
  t.stream = opt.stream < 0 ? kComputeStream : opt.stream;
  t.name = std::move(opt.name);
  t.deps = std::move(opt.deps);
  t.micro_batch = opt.micro_batch;
  t.stage = opt.stage;
  return t;
}
}  // namespace

TaskId Program::compute(int device, double flops, TaskOptions opt) {
  return add(compute_task(device, flops, 0, std::move(opt)));
}

TaskId Program::compute_seconds(int device, double seconds, TaskOptions opt) {
  return add(compute_task(device, 0, seconds, std::move(opt)));
}

TaskId Program::collective(CollectiveKind kind, std::vector<int> devices, double bytes, CollectiveAlgo algo,
                           TaskOptions opt) {
  Task t;
  t.kind = TaskKind::collective;
  t.collective = kind;
  t.algo = algo;
  t.bytes = bytes;
  t.devices = std::move(devices);
  t.phase = opt.phase;
  t.stream = opt.stream < 0 ? kCommStream : opt.stream;
  t.name = std::move(opt.name);
  t.deps = std::move(opt.deps);
  t.micro_batch = opt.micro_batch;
  t.stage = opt.stage;
  return add(std::move(t));
}

TaskId Program::send_recv(int src, int dst, double bytes, TaskOptions opt) {
  return collective(CollectiveKind::send_recv, {src, dst}, bytes, CollectiveAlgo::direct, std::move(opt));
}

TaskId Program::add(Task t) {
  const auto id = static_cast<TaskId>(tasks_.size());
  const std::string field = task_field(id, t.name);
  auto bad = [&](const std::string& reason) { return InputError("program", field, reason); };
  if (t.stream < 0 || t.stream >= streams_)
    throw bad("stream " + std::to_string(t.stream) + " outside 0.." + std::to_string(streams_ - 1));
  if (t.devices.empty()) throw bad("no device");
  if (t.kind == TaskKind::compute && t.devices.size() != 1) throw bad("a compute task runs on one device");
  if (t.kind == TaskKind::collective && t.collective == CollectiveKind::send_recv && t.devices.size() != 2)
    throw bad("send_recv needs {src, dst}");
  std::set<int> seen;
  for (int d : t.devices) {
    if (d < 0 || d >= devices_)
      throw bad("device " + std::to_string(d) + " outside 0.." + std::to_string(devices_ - 1));
    if (!seen.insert(d).second) throw bad("device " + std::to_string(d) + " listed twice");
  }
  if (!(t.flops >= 0) || !(t.seconds >= 0) || !(t.bytes >= 0)) throw bad("negative or NaN amount");
  if (t.channels < 0) throw bad("negative channel count");
  for (TaskId d : t.deps)
    if (d < 0 || d >= id) throw bad("dependency " + std::to_string(d) + " is not an earlier task");
  for (int d : t.devices) per_stream_[static_cast<size_t>(stream_index(d, t.stream))].push_back(id);
  tasks_.push_back(std::move(t));
  return id;
}

void Program::set_stream_name(int stream, std::string name) {
  if (stream < 0 || stream >= streams_)
    throw InputError("program", "stream " + std::to_string(stream), "outside 0.." + std::to_string(streams_ - 1));
  stream_names_.resize(static_cast<size_t>(streams_));
  stream_names_[static_cast<size_t>(stream)] = std::move(name);
}

std::string Program::stream_name(int stream) const {
  if (stream >= 0 && static_cast<size_t>(stream) < stream_names_.size() && !stream_names_[static_cast<size_t>(stream)].empty())
    return stream_names_[static_cast<size_t>(stream)];
  return stream == kComputeStream ? "compute" : stream == kCommStream ? "comm" : "stream " + std::to_string(stream);
}

TaskId Program::last_on(int device, int stream) const {
  const auto& v = stream_tasks(device, stream);
  return v.empty() ? -1 : v.back();
}

}  // namespace autoddl::sim
