// Derived figures of a SimResult from its task timings: busy time per stream, and per device
// the time computing, communicating, communicating while not computing (exposed), and idle.
#include <algorithm>

#include "executor.hpp"

namespace autoddl::sim {

namespace {
using Intervals = std::vector<std::pair<double, double>>;

// Sorts and merges in place; returns the covered length.
double merge(Intervals& v) {
  std::sort(v.begin(), v.end());
  Intervals out;
  for (const auto& iv : v) {
    if (iv.second <= iv.first) continue;
    if (!out.empty() && iv.first <= out.back().second)
      out.back().second = std::max(out.back().second, iv.second);
    else
      out.push_back(iv);
  }
  v.swap(out);
  double len = 0;
  for (const auto& iv : v) len += iv.second - iv.first;
  return len;
}

// Length of the intersection of two merged interval lists.
double overlap(const Intervals& a, const Intervals& b) {
  double len = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const double lo = std::max(a[i].first, b[j].first);
    const double hi = std::min(a[i].second, b[j].second);
    if (hi > lo) len += hi - lo;
    (a[i].second < b[j].second) ? ++i : ++j;
  }
  return len;
}
}  // namespace

void summarize_usage(const Program& p, SimResult& r) {
  const auto devices = static_cast<size_t>(p.devices());
  std::vector<double> busy(static_cast<size_t>(p.stream_count()), 0);
  std::vector<char> used(busy.size(), 0);
  std::vector<Intervals> comp(devices), comm(devices);
  for (size_t id = 0; id < p.size(); ++id) {
    const Task& t = p.tasks()[id];
    const TaskTiming& tm = r.tasks[id];
    for (int d : t.devices) {
      const auto s = static_cast<size_t>(p.stream_index(d, t.stream));
      busy[s] += tm.end_s - tm.start_s;
      used[s] = 1;
      (t.kind == TaskKind::compute ? comp : comm)[static_cast<size_t>(d)].emplace_back(tm.start_s, tm.end_s);
    }
  }
  r.streams.clear();
  for (size_t s = 0; s < busy.size(); ++s) {
    if (!used[s]) continue;
    r.streams.push_back({static_cast<int>(s) / p.streams_per_device(), static_cast<int>(s) % p.streams_per_device(),
                         busy[s]});
  }
  r.devices.assign(devices, DeviceUse{});
  r.compute_s = r.comm_s = r.exposed_comm_s = 0;
  for (size_t d = 0; d < devices; ++d) {
    DeviceUse& u = r.devices[d];
    u.compute_s = merge(comp[d]);
    u.comm_s = merge(comm[d]);
    const double both = overlap(comp[d], comm[d]);
    u.exposed_comm_s = u.comm_s - both;
    u.idle_s = std::max(0.0, r.iteration_s - (u.compute_s + u.comm_s - both));
    r.compute_s = std::max(r.compute_s, u.compute_s);
    r.comm_s = std::max(r.comm_s, u.comm_s);
    r.exposed_comm_s = std::max(r.exposed_comm_s, u.exposed_comm_s);
  }
}

}  // namespace autoddl::sim
