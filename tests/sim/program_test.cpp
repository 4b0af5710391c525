// Program building and running: bad tasks are InputErrors naming the task; insertion order is
// stream order; simulations run repeatedly in one process (each in its own child), give the
// same result every time, and the child's errors come back with their file, field and reason.
#include <catch2/catch.hpp>

#include <functional>
#include <string>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/sim/simulate.hpp"

using namespace autoddl;
using costmodel::CollectiveAlgo;
using costmodel::CollectiveKind;

namespace {
std::string input_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("program builders reject bad devices, streams, amounts and dependencies", "[sim][program]") {
  sim::Program p(2);
  sim::TaskId a = p.compute_seconds(0, 1e-3, {.name = "a"});
  CHECK_THAT(input_error([&] { p.compute_seconds(2, 1e-3); }), Catch::Contains("device 2 outside 0..1"));
  CHECK_THAT(input_error([&] { p.compute_seconds(0, 1e-3, {.stream = 5}); }), Catch::Contains("stream 5"));
  CHECK_THAT(input_error([&] { p.compute_seconds(0, 1e-3, {.deps = {a + 7}}); }),
             Catch::Contains("not an earlier task"));
  CHECK_THAT(input_error([&] { p.collective(CollectiveKind::all_reduce, {1, 1}, 1e6); }),
             Catch::Contains("listed twice"));
  CHECK_THAT(input_error([&] { p.compute_seconds(0, -1, {.name = "neg"}); }), Catch::Contains("program: task"));
  CHECK(p.last_on(0, sim::kComputeStream) == a);
}

TEST_CASE("a program of more streams than the limit is refused before any is allocated", "[sim][program]") {
  // 8000 GPUs x (2 + 8000 x 1000) PS lanes: once an int overflow, then billions of lists.
  try {
    sim::Program p(8000, 2 + 8000 * 1000);
    FAIL("no error");
  } catch (const autoddl::InputError& e) {
    CHECK(std::string(e.what()) == "program: streams: 8000 devices x 8000002 streams each is more than the simulator's "
                                   "33554432 streams (a smaller cluster)");
  }
  CHECK_THROWS_AS(sim::Program(1025, 1 << 15), autoddl::InputError);  // just over: 2^25 + 2^15
}

TEST_CASE("a task joins every participant's stream in the order tasks were added", "[sim][program]") {
  sim::Program p(3);
  sim::TaskId x = p.collective(CollectiveKind::all_reduce, {0, 1}, 1e6);
  sim::TaskId y = p.send_recv(2, 1, 1e3);
  sim::TaskId z = p.collective(CollectiveKind::all_gather, {1, 2, 0}, 1e6);
  CHECK(p.stream_tasks(1, sim::kCommStream) == std::vector<sim::TaskId>{x, y, z});
  CHECK(p.stream_tasks(0, sim::kCommStream) == std::vector<sim::TaskId>{x, z});
  CHECK(p.stream_tasks(0, sim::kComputeStream).empty());
}

TEST_CASE("simulating twice in one process gives identical results", "[sim][isolation]") {
  const auto c = costmodel::resolve_cluster("dgx-a100", 2);
  sim::Program p(16);
  for (int d = 0; d < 16; ++d) p.compute_seconds(d, 1e-3 * (1 + d % 3));
  p.collective(CollectiveKind::all_reduce, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, 1e8,
               CollectiveAlgo::hierarchical);
  const auto r1 = sim::simulate(p, c);
  const auto r2 = sim::simulate(p, c);
  CHECK(r1.iteration_s == r2.iteration_s);
  CHECK(r1.events == r2.events);
  REQUIRE(r1.tasks.size() == p.size());
  for (size_t i = 0; i < p.size(); ++i) CHECK(r1.tasks[i].end_s == r2.tasks[i].end_s);
}

TEST_CASE("cluster and program errors come back as InputErrors naming the field", "[sim][isolation]") {
  auto c = costmodel::resolve_cluster("dgx-a100", 2);
  sim::Program p(16);
  p.collective(CollectiveKind::all_reduce, {0, 8}, 1e6);
  auto torus = c;
  torus.inter.topology = "torus";  // rejected by the platform builder, inside the child
  CHECK(input_error([&] { sim::simulate(p, torus); }) == "cluster: inter.topology: unknown topology 'torus' (star, fat-tree)");

  sim::Program one_node(8);
  one_node.collective(CollectiveKind::all_reduce, {0, 1, 2, 3}, 1e6, CollectiveAlgo::hierarchical, {.name = "ar"});
  CHECK_THAT(input_error([&] { sim::simulate(one_node, c); }),
             Catch::StartsWith("program: task 0 'ar': all_reduce with algorithm hierarchical does not apply"));

  sim::Program tree(16);
  tree.collective(CollectiveKind::all_gather, {0, 8}, 1e6, CollectiveAlgo::tree);
  CHECK_THAT(input_error([&] { sim::simulate(tree, c); }), Catch::Contains("the simulator has no all_gather with algorithm tree"));

  CHECK_THAT(input_error([&] { sim::simulate(sim::Program(17), c); }), Catch::Contains("17 devices"));
}
