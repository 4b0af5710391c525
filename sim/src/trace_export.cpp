// SimResult + Program -> Chrome trace (see trace.hpp).
#include <cmath>
#include <iomanip>
#include <sstream>

#include "autoddl/sim/trace.hpp"

namespace autoddl::sim {

std::string format_bytes(double bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (std::abs(bytes) >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  std::ostringstream out;
  out << std::setprecision(3) << bytes << ' ' << units[u];
  return out.str();
}

traces::ChromeTrace to_chrome_trace(const Program& p, const SimResult& r, const costmodel::ClusterSpec& c) {
  traces::ChromeTrace tr;
  const int g = c.gpus_per_node;
  const int streams = p.streams_per_device();
  auto pid_of = [&](int d) { return d / g; };
  auto tid_of = [&](int d, int s) { return (d % g) * streams + s; };
  for (int d = 0; d < p.devices(); ++d) {
    tr.process_names[pid_of(d)] = "node " + std::to_string(pid_of(d));
    for (int s = 0; s < streams; ++s) {
      if (p.stream_tasks(d, s).empty()) continue;
      tr.thread_names[{pid_of(d), tid_of(d, s)}] = "gpu " + std::to_string(d) + " " + p.stream_name(s);
    }
  }
  tr.spans.reserve(p.size());
  for (size_t id = 0; id < p.size(); ++id) {
    const Task& t = p.tasks()[id];
    const TaskTiming& tm = r.tasks[id];
    traces::TraceSpan span;
    span.category = std::string(phase_name(t.phase));
    span.start_s = tm.start_s;
    span.duration_s = tm.end_s - tm.start_s;
    span.args["task"] = id;
    if (!t.name.empty()) span.args["label"] = t.name;
    if (t.micro_batch >= 0) span.args["micro_batch"] = t.micro_batch;
    if (t.stage >= 0) span.args["stage"] = t.stage;
    if (t.overlap != Overlap::none) span.args["overlap"] = std::string(overlap_name(t.overlap));
    if (t.kind == TaskKind::compute) {
      span.name = t.name.empty() ? "compute" : t.name;
      if (t.flops > 0) span.args["flops"] = t.flops;
    } else {
      span.name = std::string(costmodel::collective_info(t.collective).name) + " " + format_bytes(t.bytes);
      span.args["bytes"] = t.bytes;
      span.args["algorithm"] = std::string(costmodel::collective_algo_name(t.algo));
      span.args["ranks"] = t.devices.size();
    }
    for (int d : t.devices) {
      span.pid = pid_of(d);
      span.tid = tid_of(d, t.stream);
      tr.spans.push_back(span);
    }
  }
  return tr;
}

void write_trace(const std::string& path, const Program& p, const SimResult& r, const costmodel::ClusterSpec& c) {
  traces::write_chrome_trace(path, to_chrome_trace(p, r, c));
}

}  // namespace autoddl::sim
