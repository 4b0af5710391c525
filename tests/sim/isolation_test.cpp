// A simulator child that dies (SimGrid out of memory for a huge platform, say) must reach the
// CLI as one InputError line, not an uncaught exception with a backtrace (issue 17).
#include <csignal>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "../../sim/src/isolation.hpp"
#include "autoddl/costmodel/error.hpp"

TEST_CASE("a simulator child killed by a signal becomes an InputError naming the signal", "[sim][isolation]") {
  try {
    autoddl::sim::run_in_child([]() -> std::string {
      std::raise(SIGSEGV);
      return "unreachable";
    });
    FAIL("no error");
  } catch (const autoddl::InputError& e) {
    CHECK(e.file() == "simulation");
    CHECK_THAT(e.reason(), Catch::StartsWith("the simulator process died (signal 11"));
  }
}

TEST_CASE("a simulator child that exits without a result becomes an InputError", "[sim][isolation]") {
  CHECK_THROWS_AS(autoddl::sim::run_in_child([]() -> std::string { ::_exit(7); }), autoddl::InputError);
}

TEST_CASE("a simulator child out of memory comes back as std::bad_alloc, not the library's text", "[sim][isolation]") {
  // The CLI prints "out of memory" for std::bad_alloc; as a runtime_error it printed
  // "simulation: std::bad_alloc".
  CHECK_THROWS_AS(autoddl::sim::run_in_child([]() -> std::string { throw std::bad_alloc(); }), std::bad_alloc);
}
