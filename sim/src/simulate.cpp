// simulate(), simulate_collective() and the SimResult JSON form: validation in the calling
// process, then the simulation itself in a forked child (isolation.hpp) or, once, in process.
#include "autoddl/sim/simulate.hpp"

#include <string>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/sim/collectives.hpp"
#include "executor.hpp"
#include "isolation.hpp"

namespace autoddl::sim {

using costmodel::ClusterSpec;
using costmodel::CollectiveAlgo;
using costmodel::CollectiveKind;

std::string_view fidelity_name(Fidelity f) { return f == Fidelity::flow ? "flow" : "step"; }

bool parse_fidelity(std::string_view text, Fidelity& out) {
  if (text == "flow") out = Fidelity::flow;
  else if (text == "step") out = Fidelity::step;
  else return false;
  return true;
}

nlohmann::json sim_result_to_json(const SimResult& r, bool with_tasks) {
  nlohmann::json j;
  j["iteration_s"] = r.iteration_s;
  j["compute_s"] = r.compute_s;
  j["comm_s"] = r.comm_s;
  j["exposed_comm_s"] = r.exposed_comm_s;
  j["events"] = r.events;
  j["wall_s"] = r.wall_s;
  auto& streams = j["streams"] = nlohmann::json::array();
  for (const auto& s : r.streams) streams.push_back({{"device", s.device}, {"stream", s.stream}, {"busy_s", s.busy_s}});
  auto& devices = j["devices"] = nlohmann::json::array();
  for (const auto& d : r.devices)
    devices.push_back({{"compute_s", d.compute_s}, {"comm_s", d.comm_s}, {"exposed_comm_s", d.exposed_comm_s},
                       {"idle_s", d.idle_s}});
  auto& links = j["busiest_links"] = nlohmann::json::array();
  for (const auto& l : r.busiest_links)
    links.push_back({{"name", l.name}, {"bytes", l.bytes}, {"bw_bytes_per_s", l.bw_bytes_per_s},
                     {"utilization", l.utilization}});
  if (with_tasks) {
    std::vector<double> start, end;
    start.reserve(r.tasks.size());
    end.reserve(r.tasks.size());
    for (const auto& t : r.tasks) {
      start.push_back(t.start_s);
      end.push_back(t.end_s);
    }
    j["task_start_s"] = std::move(start);
    j["task_end_s"] = std::move(end);
  }
  return j;
}

SimResult sim_result_from_json(const nlohmann::json& j) {
  SimResult r;
  r.iteration_s = j.at("iteration_s").get<double>();
  r.compute_s = j.at("compute_s").get<double>();
  r.comm_s = j.at("comm_s").get<double>();
  r.exposed_comm_s = j.at("exposed_comm_s").get<double>();
  r.events = j.at("events").get<int64_t>();
  r.wall_s = j.at("wall_s").get<double>();
  for (const auto& s : j.at("streams"))
    r.streams.push_back({s.at("device").get<int>(), s.at("stream").get<int>(), s.at("busy_s").get<double>()});
  for (const auto& d : j.at("devices"))
    r.devices.push_back({d.at("compute_s").get<double>(), d.at("comm_s").get<double>(),
                         d.at("exposed_comm_s").get<double>(), d.at("idle_s").get<double>()});
  for (const auto& l : j.at("busiest_links"))
    r.busiest_links.push_back({l.at("name").get<std::string>(), l.at("bytes").get<double>(),
                               l.at("bw_bytes_per_s").get<double>(), l.at("utilization").get<double>()});
  if (j.contains("task_start_s")) {
    const auto& s = j.at("task_start_s");
    const auto& e = j.at("task_end_s");
    r.tasks.resize(s.size());
    for (size_t i = 0; i < s.size(); ++i) r.tasks[i] = {s[i].get<double>(), e[i].get<double>()};
  }
  return r;
}

namespace {
// The largest cluster the simulator builds: SimGrid's platform (hosts, links, fat-tree routes) for
// the whole cluster grows faster than linearly (dgx-a100 fat tree: 4096 GPUs 1.8 s, 8192 GPUs 11 s,
// 16384 GPUs over a minute, before a single event), so larger ones are refused up front.
constexpr int kMaxSimulatedGpus = 8192;

// Checks what the executor would otherwise find only inside the simulation.
void check_against_cluster(const Program& p, const ClusterSpec& c) {
  if (c.total_gpus() > kMaxSimulatedGpus) {
    throw InputError("simulator", "cluster",
                     "simulates at most " + std::to_string(kMaxSimulatedGpus) + " GPUs (this cluster has " +
                         std::to_string(c.total_gpus()) + "); the analytical model (without --sim) has no such limit");
  }
  if (p.devices() > c.total_gpus())
    throw InputError("program", "devices",
                     std::to_string(p.devices()) + " devices but cluster '" + c.name + "' has " +
                         std::to_string(c.total_gpus()) + " GPUs");
  for (size_t id = 0; id < p.size(); ++id) {
    const Task& t = p.tasks()[id];
    if (t.kind != TaskKind::collective) continue;
    const std::string field = "task " + std::to_string(id) + (t.name.empty() ? "" : " '" + t.name + "'");
    const CollectiveAlgorithm* row = find_collective_algorithm(t.collective, t.algo);
    const std::string what = std::string(costmodel::collective_info(t.collective).name) + " with algorithm " +
                             std::string(costmodel::collective_algo_name(t.algo));
    if (!row) throw InputError("program", field, "the simulator has no " + what);
    const int local = ranks_per_node(t.devices, c.gpus_per_node);
    if (!row->applies(static_cast<int>(t.devices.size()), local))
      throw InputError("program", field,
                       what + " does not apply to " + std::to_string(t.devices.size()) + " devices (" +
                           std::to_string(local) + " per node)");
  }
}
}  // namespace

SimResult simulate(const Program& program, const ClusterSpec& cluster, const SimOptions& options) {
  check_against_cluster(program, cluster);
  if (options.isolation == Isolation::in_process) {
    claim_in_process_engine();
    return execute_program(program, cluster, options);
  }
  std::string bytes = run_in_child([&] {
    auto j = sim_result_to_json(execute_program(program, cluster, options));
    auto cbor = nlohmann::json::to_cbor(j);
    return std::string(cbor.begin(), cbor.end());
  });
  return sim_result_from_json(nlohmann::json::from_cbor(bytes));
}

Program collective_sweep_program(const ClusterSpec& cluster, CollectiveKind kind, int ranks,
                                 const std::vector<double>& sizes_bytes, std::optional<CollectiveAlgo> algo) {
  if (ranks < 1 || ranks > cluster.total_gpus())
    throw InputError("--ranks", "", std::to_string(ranks) + " ranks outside 1.." + std::to_string(cluster.total_gpus()));
  std::vector<int> devices;
  for (int i = 0; i < ranks; ++i) devices.push_back(i);
  if (kind == CollectiveKind::send_recv) devices = {0, ranks - 1};
  Program p(ranks);
  const int local = ranks_per_node(devices, cluster.gpus_per_node);
  TaskId prev = -1;
  for (double s : sizes_bytes) {
    CollectiveAlgo a = default_algorithm(kind);
    if (algo) {
      a = *algo;
    } else {
      // The analytical model's pick, when the simulator has it and it applies to the group.
      const auto est = costmodel::collective_time(cluster, kind, costmodel::contiguous_group(cluster, ranks), s);
      const CollectiveAlgorithm* row = find_collective_algorithm(kind, est.algo);
      if (row && row->applies(static_cast<int>(devices.size()), local)) a = est.algo;
    }
    TaskOptions o;
    if (prev >= 0) o.deps = {prev};
    prev = p.collective(kind, devices, s, a, std::move(o));
  }
  return p;
}

std::vector<double> simulate_collective_sweep(const ClusterSpec& cluster, CollectiveKind kind, int ranks,
                                              const std::vector<double>& sizes_bytes, Fidelity fidelity,
                                              std::optional<CollectiveAlgo> algo) {
  if (kind == CollectiveKind::send_recv && ranks < 2) throw InputError("--ranks", "", "send_recv needs 2 ranks");
  Program p = collective_sweep_program(cluster, kind, ranks, sizes_bytes, algo);
  SimOptions o;
  o.fidelity = fidelity;
  o.busiest_links = 0;
  SimResult r = simulate(p, cluster, o);
  std::vector<double> times;
  for (const auto& t : r.tasks) times.push_back(t.end_s - t.start_s);
  return times;
}

double simulate_collective(const ClusterSpec& cluster, CollectiveKind kind, int ranks, double bytes, Fidelity fidelity,
                           std::optional<CollectiveAlgo> algo) {
  return simulate_collective_sweep(cluster, kind, ranks, {bytes}, fidelity, algo).front();
}

}  // namespace autoddl::sim
