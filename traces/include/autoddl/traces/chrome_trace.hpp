// Chrome trace-event files (the JSON object format that chrome://tracing and Perfetto open):
// {"traceEvents": [...], "displayTimeUnit": "ms"}. Fields used, documented once here:
//   complete event  {"ph":"X", "name", "cat", "pid", "tid", "ts" (µs), "dur" (µs), "args"}
//   metadata        {"ph":"M", "name":"process_name"|"thread_name", "pid", "tid", "args":{"name"}}
//                   and "process_sort_index"/"thread_sort_index" ({"args":{"sort_index"}}).
// autoddl's convention: one process per node, one thread per (GPU, stream); the producer
// (sim/, calib/) chooses names. Spec: "Trace Event Format", Google, 2016.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace autoddl::traces {

struct TraceSpan {
  std::string name;
  std::string category;
  int pid = 0;
  int tid = 0;
  double start_s = 0;
  double duration_s = 0;
  nlohmann::json args = nlohmann::json::object();
};

struct ChromeTrace {
  std::map<int, std::string> process_names;                 // pid -> name
  std::map<std::pair<int, int>, std::string> thread_names;  // (pid, tid) -> name
  std::vector<TraceSpan> spans;
};

// The trace as a JSON document; metadata first, then spans in the order given.
nlohmann::json chrome_trace_json(const ChromeTrace& trace);
// Writes it atomically (autoddl::write_file_atomic); throws InputError(path, "", reason).
void write_chrome_trace(const std::string& path, const ChromeTrace& trace);

}  // namespace autoddl::traces
