// How the harness launches a timed loop (issue 16, defect 5): where one thread launches for all
// of a process's GPUs (the single-process NCCL programs) the default is one CUDA graph per GPU,
// as nccl-tests -G, so small-message α is not the host's launch time; one process per GPU (MPI)
// and the compute programs launch call by call; --launch always wins.
#include <catch2/catch.hpp>

#include "harness.hpp"

using autoddl::calib::gpu::launch_mode;
using autoddl::calib::gpu::Options;

TEST_CASE("the single-process NCCL path times a CUDA graph by default, one process per GPU does not",
          "[calib][nccl]") {
  Options opt;
  CHECK(opt.launch.empty());
  CHECK(launch_mode(opt, true) == "graph");
  CHECK(launch_mode(opt, false) == "stream");
}

TEST_CASE("an explicit --launch overrides the default either way", "[calib][nccl]") {
  Options opt;
  opt.launch = "stream";
  CHECK(launch_mode(opt, true) == "stream");
  opt.launch = "graph";
  CHECK(launch_mode(opt, false) == "graph");
}
