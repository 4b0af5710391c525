// One CUPTI client per process (issue 16, defect 3): under an injected tracer the harness's and
// validate_runner's own CUPTI use stays off and says why; the injected library itself, or a
// program run without injection, owns CUPTI.
#include <catch2/catch.hpp>

#include "cupti_activity.hpp"

using autoddl::calib::gpu::cupti_owned_elsewhere;

TEST_CASE("a program run under CUDA_INJECTION64_PATH leaves CUPTI to the injected tracer and says so",
          "[calib][cupti]") {
  const std::string why = cupti_owned_elsewhere("/opt/autoddl/libautoddl_cupti_tracer.so", false);
  REQUIRE_FALSE(why.empty());
  CHECK(why.find("CUDA_INJECTION64_PATH=/opt/autoddl/libautoddl_cupti_tracer.so") != std::string::npos);
  CHECK(why.find("CUPTI pass") != std::string::npos);
}

TEST_CASE("the injected tracer, or a program without injection, owns CUPTI", "[calib][cupti]") {
  CHECK(cupti_owned_elsewhere("/opt/autoddl/libautoddl_cupti_tracer.so", true).empty());
  CHECK(cupti_owned_elsewhere(nullptr, false).empty());
  CHECK(cupti_owned_elsewhere("", false).empty());
}
