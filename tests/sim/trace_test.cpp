// Chrome traces of simulated iterations: valid JSON that Perfetto opens, one complete event
// per task and stream it occupied, times in µs, one process per node, named streams,
// collectives named by kind and size.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/sim/simulate.hpp"
#include "autoddl/sim/trace.hpp"

using namespace autoddl;
using costmodel::CollectiveKind;

TEST_CASE("a simulated trace parses as JSON with one X event per task and participating stream", "[sim][traces]") {
  const auto c = costmodel::resolve_cluster("dgx-a100", 2);
  sim::Program p(16, 3);
  sim::TaskId f0 = p.compute_seconds(0, 1e-3, {.phase = sim::Phase::forward, .name = "fwd layer0"});
  sim::TaskId f8 = p.compute_seconds(8, 1e-3, {.phase = sim::Phase::forward, .name = "fwd layer0"});
  p.collective(CollectiveKind::all_reduce, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, 64.0 * 1024 * 1024,
               costmodel::CollectiveAlgo::ring, {.deps = {f0, f8}, .phase = sim::Phase::grad_sync});
  p.send_recv(0, 8, 1024, {.deps = {f0}, .stream = 2});
  const sim::SimResult r = sim::simulate(p, c);

  const std::string path = "trace_test." + std::to_string(::getpid()) + ".json";
  sim::write_trace(path, p, r, c);
  const nlohmann::json j = read_json_file(path);
  std::remove(path.c_str());

  std::map<int, int> events_per_task;
  std::set<int> pids_named;
  std::set<std::pair<int, int>> threads_named;
  std::set<std::pair<int, int>> threads_used;
  bool named_collective = false;
  for (const auto& e : j.at("traceEvents")) {
    const std::string ph = e.at("ph");
    if (ph == "M") {
      if (e.at("name") == "process_name") pids_named.insert(e.at("pid").get<int>());
      if (e.at("name") == "thread_name") threads_named.insert({e.at("pid").get<int>(), e.at("tid").get<int>()});
      continue;
    }
    REQUIRE(ph == "X");
    const int id = e.at("args").at("task");
    ++events_per_task[id];
    threads_used.insert({e.at("pid").get<int>(), e.at("tid").get<int>()});
    CHECK(e.at("ts").get<double>() == Approx(r.tasks[id].start_s * 1e6));
    CHECK(e.at("dur").get<double>() == Approx((r.tasks[id].end_s - r.tasks[id].start_s) * 1e6));
    named_collective |= e.at("name") == "all_reduce 64 MiB";
  }
  REQUIRE(events_per_task.size() == p.size());
  for (const auto& [id, n] : events_per_task) CHECK(n == static_cast<int>(p.task(id).devices.size()));
  CHECK(pids_named == std::set<int>{0, 1});
  for (const auto& t : threads_used) CHECK(threads_named.count(t) == 1);
  CHECK(named_collective);
}

TEST_CASE("byte counts in trace names use binary units", "[sim][traces]") {
  CHECK(sim::format_bytes(512) == "512 B");
  CHECK(sim::format_bytes(64.0 * 1024 * 1024) == "64 MiB");
  CHECK(sim::format_bytes(1.5 * 1024 * 1024 * 1024) == "1.5 GiB");
}
