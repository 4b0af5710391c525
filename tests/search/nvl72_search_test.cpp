// Issue 30: the default search on Llama 3 70B over 64 GB200 GPUs in one NVL72 rack's NVLink
// domain (the node cut to the job's 64 GPUs, as Megatron-Bridge's launcher segments a rack) is
// never slower, predicted, than the best Megatron grid point, whose space now holds context
// parallelism, Megatron-FSDP and tensor/pipeline/data dims that stay on NVLink up to 64 GPUs.
#include <catch2/catch.hpp>

#include "fixtures.hpp"

using namespace search_fixtures;

TEST_CASE("on Llama 3 70B over 64 GB200 of one NVL72 rack the default search is at least as fast as the Megatron grid",
          "[search][nvl72]") {
  ClusterSpec c = resolve_cluster("gb200-nvl72", 1);
  c.gpus_per_node = 64;  // one NVLink domain of 64 GPUs
  const Graph g = build_zoo_model("llama", parse_knob_list("size=3-70b,seq=8192,batch=128,flash=1"));
  SearchOptions o;
  o.time_limit_s = 15;  // cd-mesh's share ends by 9/10 of it; the grid and cd-expert run whole
  o.jobs = 2;
  const SearchRun run = run_search(g, c, o, default_methods());
  REQUIRE_FALSE(run.results.empty());
  const SearchResult& best = run.results.front();
  const SearchResult& mega = result_of(run, "megatron");
  REQUIRE(mega.report.feasible);
  CHECK(best.report.feasible);
  CHECK(best.report.iteration_s <= mega.report.iteration_s);
  // The grid priced FSDP and context-parallel points on this rack (they are its coordinates),
  // and its best point uses a dim a 64-GPU NVLink domain affords: cp, fsdp or tp beyond a
  // DGX's 8.
  const auto& grid = mega.details;
  INFO(mega.note);
  CHECK(grid.at("grid_points").get<int>() > 0);
  CHECK_FALSE(grid.at("truncated").get<bool>());
  const bool nvlink_wide = mega.note.find("cp=") != std::string::npos || mega.note.find("fsdp=1") != std::string::npos ||
                           mega.scheme.mesh_shape.back() > 8;
  CHECK(nvlink_wide);
}
