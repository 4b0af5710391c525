// The results file: one JSON line per cell, a torn last line (a kill inside write) trimmed on
// reopening and skipped by readers, and an ok row standing over a recorded failure.
#include <catch2/catch.hpp>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/experiments/results.hpp"
#include "sweep_fixture.hpp"

using namespace autoddl::experiments;
using namespace sweep_test;

TEST_CASE("a torn last line is skipped by readers and cut off when the log is reopened", "[experiments][results]") {
  const std::string dir = scratch("torn");
  const std::string path = dir + "/results.jsonl";
  {
    ResultLog log(path);
    log.append({{"key", "a"}, {"status", "ok"}});
    log.append({{"key", "b"}, {"status", "ok"}});
  }
  { std::ofstream(path, std::ios::app) << R"({"key":"c","status":"o)"; }  // killed mid-line
  int skipped = 0;
  auto rows = read_result_rows(dir, &skipped);
  CHECK(rows.size() == 2);
  CHECK(skipped == 1);
  {
    ResultLog log(path);
    log.append({{"key", "c"}, {"status", "ok"}, {"note", "line\nbreak"}});
  }
  rows = read_result_rows(dir, &skipped);
  REQUIRE(rows.size() == 3);
  CHECK(skipped == 0);
  CHECK(rows[2].key() == "c");
  CHECK(rows[2].row["note"] == "line\nbreak");
  CHECK(line_count(path) == 3);
  fs::remove_all(dir);
}

TEST_CASE("an ok row stands over a failed row of the same cell in any order", "[experiments][results]") {
  const std::string dir = scratch("latest");
  {
    ResultLog log(dir + "/results.jsonl");
    log.append({{"key", "a"}, {"status", "failed"}, {"error", "first"}});
    log.append({{"key", "a"}, {"status", "ok"}});
    log.append({{"key", "b"}, {"status", "ok"}});
    log.append({{"key", "b"}, {"status", "failed"}});
    log.append({{"key", "c"}, {"status", "failed"}, {"error", "first"}});
    log.append({{"key", "c"}, {"status", "failed"}, {"error", "second"}});
  }
  const auto latest = latest_rows(read_result_rows(dir));
  CHECK(latest.at("a").ok());
  CHECK(latest.at("b").ok());
  CHECK(latest.at("c").row["error"] == "second");
  CHECK(results_file_name(0, 1) == "results.jsonl");
  CHECK(results_file_name(2, 4) == "results.shard-2-of-4.jsonl");
  fs::remove_all(dir);
}

TEST_CASE("a bad line before the last is an error naming it, not a cell skipped in silence", "[experiments][results]") {
  const std::string dir = scratch("corrupt");
  const std::string path = dir + "/results.jsonl";
  {
    ResultLog log(path);
    log.append({{"key", "a"}, {"status", "ok"}});
  }
  { std::ofstream(path, std::ios::app) << "{\"key\":\"b\",\"sta\n" << R"({"key":"c","status":"ok"})" << "\n"; }
  try {
    read_result_rows(dir);
    FAIL("no error");
  } catch (const autoddl::InputError& e) {
    CHECK(e.file() == path);
    CHECK(e.field() == "line 2");
    CHECK(e.reason().find("not a result row") == 0);
  }
  fs::remove_all(dir);
}

TEST_CASE("a results file that is not a regular file is refused, not read or skipped", "[experiments][results]") {
  const std::string dir = scratch("zero");
  fs::create_symlink("/dev/zero", dir + "/results.jsonl");
  try {
    read_result_rows(dir);
    FAIL("no error");
  } catch (const autoddl::InputError& e) {
    CHECK(std::string(e.what()) == dir + "/results.jsonl: not a regular file");
  }
  fs::remove_all(dir);
}
