// Program builders and the static check that a program runs to completion (see program.hpp).
// The check replays the streams without time: a stream advances while its head task's
// dependencies are done; a collective completes once every participant stream has it at its
// head. Whatever is left when nothing can advance is a deadlock.
#include "autoddl/sim/program.hpp"

#include <deque>
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

namespace {
std::string task_field(TaskId id, const std::string& name) {
  return "task " + std::to_string(id) + (name.empty() ? "" : " '" + name + "'");
}
}  // namespace

Program::Program(int devices, int streams_per_device) : devices_(devices), streams_(streams_per_device) {
  if (devices < 1) throw InputError("program", "devices", "must be >= 1");
  if (streams_per_device < 2) throw InputError("program", "streams_per_device", "must be >= 2");
  per_stream_.resize(static_cast<size_t>(devices * streams_per_device));
}

TaskId Program::compute(int device, double flops, TaskOptions opt) {
  Task t;
  t.kind = TaskKind::compute;
  t.devices = {device};
  t.flops = flops;
  t.phase = opt.phase;
  t.stream = opt.stream < 0 ? kComputeStream : opt.stream;
  t.name = std::move(opt.name);
  t.deps = std::move(opt.deps);
  t.micro_batch = opt.micro_batch;
  t.stage = opt.stage;
  return add(std::move(t));
}

TaskId Program::compute_seconds(int device, double seconds, TaskOptions opt) {
  TaskId id = compute(device, 0, std::move(opt));
  tasks_.back().seconds = seconds;
  if (!(seconds >= 0)) throw InputError("program", task_field(id, tasks_.back().name), "seconds must be >= 0");
  return id;
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
  for (TaskId d : t.deps)
    if (d < 0 || d >= id) throw bad("dependency " + std::to_string(d) + " is not an earlier task");
  for (int d : t.devices) per_stream_[static_cast<size_t>(stream_index(d, t.stream))].push_back(id);
  tasks_.push_back(std::move(t));
  return id;
}

TaskId Program::last_on(int device, int stream) const {
  const auto& v = stream_tasks(device, stream);
  return v.empty() ? -1 : v.back();
}

void check_runs_to_completion(const Program& p) {
  const size_t n = p.size();
  const int streams = p.stream_count();
  std::vector<size_t> head(static_cast<size_t>(streams), 0);
  std::vector<char> done(n, 0);
  std::vector<int> arrived(n, 0);
  std::vector<TaskId> arrived_at(static_cast<size_t>(streams), -1);
  std::vector<std::vector<int>> waiters(n);  // streams blocked on a dependency
  std::deque<int> work;
  for (int s = 0; s < streams; ++s) work.push_back(s);
  size_t finished = 0;

  auto stream_list = [&](int s) -> const std::vector<TaskId>& {
    return p.stream_tasks(s / p.streams_per_device(), s % p.streams_per_device());
  };
  auto complete = [&](TaskId t) {
    done[static_cast<size_t>(t)] = 1;
    ++finished;
    for (int s : waiters[static_cast<size_t>(t)]) work.push_back(s);
    waiters[static_cast<size_t>(t)].clear();
  };
  while (!work.empty()) {
    int s = work.front();
    work.pop_front();
    const auto& list = stream_list(s);
    while (head[static_cast<size_t>(s)] < list.size()) {
      TaskId t = list[head[static_cast<size_t>(s)]];
      const Task& task = p.task(t);
      bool blocked = false;
      for (TaskId d : task.deps) {
        if (!done[static_cast<size_t>(d)]) {
          waiters[static_cast<size_t>(d)].push_back(s);
          blocked = true;
          break;
        }
      }
      if (blocked) break;
      if (task.devices.size() > 1) {
        if (arrived_at[static_cast<size_t>(s)] == t) break;
        arrived_at[static_cast<size_t>(s)] = t;
        if (++arrived[static_cast<size_t>(t)] < static_cast<int>(task.devices.size())) break;
        complete(t);
        for (int d : task.devices) {
          int other = p.stream_index(d, task.stream);
          ++head[static_cast<size_t>(other)];
          if (other != s) work.push_back(other);
        }
      } else {
        complete(t);
        ++head[static_cast<size_t>(s)];
      }
    }
  }
  if (finished == n) return;
  std::string stuck;
  TaskId first = -1;
  int shown = 0;
  for (int s = 0; s < streams && shown < 4; ++s) {
    const auto& list = stream_list(s);
    if (head[static_cast<size_t>(s)] >= list.size()) continue;
    TaskId t = list[head[static_cast<size_t>(s)]];
    if (first < 0) first = t;
    stuck += (shown ? "; " : "") + std::string("device ") + std::to_string(s / p.streams_per_device()) +
             " stream " + std::to_string(s % p.streams_per_device()) + " waits at " +
             task_field(t, p.task(t).name);
    ++shown;
  }
  throw InputError("program", task_field(first, p.task(first).name),
                   "deadlock: " + std::to_string(n - finished) + " tasks never run (" + stuck + ")");
}

}  // namespace autoddl::sim
