// The Chrome trace of a simulated scheme: valid JSON with one X event per task and device it
// ran on, named streams (compute, boxing, grad sync, pipeline), labels for ops, micro-batches
// and stages, and a SimReport JSON with the documented fields.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/zoo.hpp"
#include "autoddl/sim/report.hpp"
#include "autoddl/sim/trace.hpp"

using namespace autoddl;

TEST_CASE("a simulated scheme's trace parses with one event per task and device, on named streams",
          "[sim][lowering][traces]") {
  const auto c = costmodel::resolve_cluster("dgx-a100", 2);
  const auto g = costmodel::build_zoo_model("gpt", costmodel::parse_knob_list("layers=4,hidden=512,heads=8,seq=256,batch=32"));
  const auto s = costmodel::make_scheme("megatron:tp=4,pp=2,dp=2,mb=4", g, c, {});
  const sim::SchemeSimulation run = sim::simulate_scheme(g, c, s);
  const std::string path = "lowering_trace_test." + std::to_string(::getpid()) + ".json";
  sim::write_trace(path, run.lowered.program, run.result, c);
  const nlohmann::json j = read_json_file(path);
  std::remove(path.c_str());

  std::map<int, size_t> events_per_task;
  std::set<std::string> thread_names;
  bool op_label = false;
  for (const auto& e : j.at("traceEvents")) {
    if (e.at("ph") == "M") {
      if (e.at("name") == "thread_name") {
        const std::string n = e.at("args").at("name");
        thread_names.insert(n.substr(n.find(' ', 4) + 1));  // "gpu 3 grad sync" -> "grad sync"
      }
      continue;
    }
    REQUIRE(e.at("ph") == "X");
    ++events_per_task[e.at("args").at("task").get<int>()];
    op_label |= e.at("args").value("label", "") == "layer.0.attn.q" && e.at("args").contains("micro_batch");
  }
  REQUIRE(events_per_task.size() == run.lowered.program.size());
  for (const auto& [id, n] : events_per_task) CHECK(n == run.lowered.program.task(id).devices.size());
  CHECK(thread_names.count("compute") == 1);
  CHECK(thread_names.count("boxing") == 1);
  CHECK(thread_names.count("grad sync") == 1);
  CHECK(thread_names.count("pipeline 0") == 1);
  CHECK(op_label);

  const nlohmann::json r = sim::sim_report_to_json(run.report);
  for (const char* key : {"iteration_s", "compute_s", "comm_s", "exposed_comm_s", "bubble_s", "busiest_links",
                          "analytical_iteration_s", "events", "wall_s"})
    CHECK(r.contains(key));
  CHECK(r.at("busiest_links").at(0).contains("utilization"));
  CHECK(r.at("analytical_iteration_s").get<double>() == run.lowered.analytical.iteration_s);
  CHECK(r.contains("discrepancy") == (std::abs(run.report.relative_difference) > 0.10));
}
