// Chrome trace-event writer (see chrome_trace.hpp): seconds in, microseconds out.
#include "autoddl/traces/chrome_trace.hpp"

#include "autoddl/costmodel/io.hpp"

namespace autoddl::traces {

nlohmann::json chrome_trace_json(const ChromeTrace& trace) {
  nlohmann::json events = nlohmann::json::array();
  for (const auto& [pid, name] : trace.process_names) {
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"tid", 0}, {"args", {{"name", name}}}});
    events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", pid}, {"tid", 0}, {"args", {{"sort_index", pid}}}});
  }
  for (const auto& [key, name] : trace.thread_names) {
    const auto& [pid, tid] = key;
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}});
    events.push_back({{"ph", "M"}, {"name", "thread_sort_index"}, {"pid", pid}, {"tid", tid}, {"args", {{"sort_index", tid}}}});
  }
  for (const TraceSpan& s : trace.spans) {
    nlohmann::json e = {{"ph", "X"},
                        {"name", s.name},
                        {"cat", s.category},
                        {"pid", s.pid},
                        {"tid", s.tid},
                        {"ts", s.start_s * 1e6},
                        {"dur", s.duration_s * 1e6}};
    if (!s.args.empty()) e["args"] = s.args;
    events.push_back(std::move(e));
  }
  return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
}

void write_chrome_trace(const std::string& path, const ChromeTrace& trace) {
  write_file_atomic(path, dump_json(chrome_trace_json(trace)) + "\n");
}

}  // namespace autoddl::traces
