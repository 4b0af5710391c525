// for_each_in_children runs jobs in forked processes from the calling thread (so that forking
// is safe under ASan, issue 17): every job's result reaches `done` in the parent with its
// index, whatever the number of jobs, and a failure stops new jobs and comes back as its error.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/sim/child_pool.hpp"

using autoddl::sim::for_each_in_children;

namespace {
std::map<size_t, std::string> run(size_t n, int jobs) {
  std::map<size_t, std::string> got;
  for_each_in_children(
      n, jobs,
      [](size_t i) {
        // Later jobs finish first, so completion order differs from index order.
        ::usleep(static_cast<useconds_t>((10 - i % 10) * 2000));
        return std::to_string(i * i) + ":" + std::to_string(::getpid());
      },
      [&](size_t i, std::string&& bytes) {
        CHECK(got.count(i) == 0);
        got[i] = std::move(bytes);
      });
  return got;
}
}  // namespace

TEST_CASE("child pool: every job runs once in its own process, for any number of jobs", "[sim][isolation]") {
  for (int jobs : {1, 3, 8}) {
    auto got = run(12, jobs);
    REQUIRE(got.size() == 12);
    std::set<std::string> pids;
    for (auto& [i, bytes] : got) {
      const auto colon = bytes.find(':');
      CHECK(bytes.substr(0, colon) == std::to_string(i * i));
      const std::string pid = bytes.substr(colon + 1);
      CHECK(pid != std::to_string(::getpid()));  // not run in the parent
      pids.insert(pid);
    }
    CHECK(pids.size() == 12);
  }
}

TEST_CASE("child pool: a failing job is rethrown as its InputError and stops new jobs", "[sim][isolation]") {
  int delivered = 0;
  try {
    for_each_in_children(
        100, 2,
        [](size_t i) -> std::string {
          if (i == 3) throw autoddl::InputError("f.json", "x", "bad");
          return "ok";
        },
        [&](size_t, std::string&&) { ++delivered; });
    FAIL("no error");
  } catch (const autoddl::InputError& e) {
    CHECK(e.file() == "f.json");
    CHECK(e.field() == "x");
    CHECK(e.reason() == "bad");
  }
  CHECK(delivered >= 3);  // jobs 0..2 finished or were running
  CHECK(delivered < 99);  // nothing started after the failure was seen
}

TEST_CASE("child pool: a job that dies becomes an InputError, zero jobs run nothing", "[sim][isolation]") {
  CHECK_THROWS_AS(for_each_in_children(
                      2, 2, [](size_t) -> std::string { ::_exit(9); }, [](size_t, std::string&&) {}),
                  autoddl::InputError);
  bool called = false;
  for_each_in_children(
      0, 4, [](size_t) { return std::string("x"); }, [&](size_t, std::string&&) { called = true; });
  CHECK_FALSE(called);
}
