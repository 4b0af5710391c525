// Sweep rows carry the model version of the autoddl that made them (issue 33 item 2): a rerun
// recomputes rows of another version, --reuse keeps them and lists them (output and run.json),
// status counts them, merge does not call two versions' rows duplicates, and a row of this
// version stands over another's even where it failed. A "model change" is faked by rewriting
// the recorded version of rows, which is what an older binary would have written.
#include <catch2/catch.hpp>

#include <algorithm>
#include <regex>

#include "autoddl/experiments/merge.hpp"
#include "autoddl/experiments/version.hpp"
#include "sweep_fixture.hpp"

using namespace sweep_test;
using namespace autoddl::experiments;

namespace {

// 2 sizes x 2 schemes of a one-layer GPT: four `autoddl cost` cells.
json small_config() {
  json c = cost_config();
  c["models"][0]["knobs"]["layers"] = 1;
  c["clusters"][0]["gpus"] = json::array({2, 4});
  c["tasks"][0]["schemes"] = json::array({"dp", "zero1"});
  return c;
}

// Rewrites every row's model version as an older binary would have recorded it ("" drops it).
void fake_older_rows(const std::string& results, const std::string& version) {
  std::string text;
  for (const auto& r : read_result_rows(fs::path(results).parent_path().string())) {
    json row = r.row;
    if (version.empty()) row.erase("model_version");
    else row["model_version"] = version;
    text += row.dump() + "\n";
  }
  std::ofstream(results, std::ios::trunc) << text;
}

}  // namespace

TEST_CASE("a row records the model version autoddl --version prints", "[experiments][sweep][version]") {
  const std::string d = scratch("ver");
  const std::string cfg = write_config(d, small_config());
  REQUIRE(run_autoddl({"sweep", "run", cfg, "--out", d + "/out"}, d + "/log") == 0);
  const std::string mv = model_version();
  CHECK(std::regex_match(mv, std::regex("[0-9a-f]{12}")));
  for (const auto& r : read_result_rows(d + "/out")) CHECK(r.row["model_version"] == mv);
  REQUIRE(run_autoddl({"--version"}, d + "/version") == 0);
  CHECK_THAT(read_all(d + "/version"), Catch::Contains("model version " + mv));
  CHECK_THAT(read_all(d + "/version"), Catch::StartsWith(std::string("autoddl ") + autoddl_version()));
  fs::remove_all(d);
}

TEST_CASE("a rerun recomputes the rows another model version made and says so", "[experiments][sweep][version]") {
  const std::string d = scratch("stale");
  const std::string cfg = write_config(d, small_config());
  const std::string out = d + "/out", results = out + "/results.jsonl";
  REQUIRE(run_autoddl({"sweep", "run", cfg, "--out", out}, d + "/log1") == 0);
  fake_older_rows(results, "0123456789ab");
  CHECK(sweep_status(out).versions == std::map<std::string, int>{{"0123456789ab", 4}});
  REQUIRE(run_autoddl({"sweep", "run", cfg, "--out", out}, d + "/log2") == 0);
  const std::string log = read_all(d + "/log2");
  CHECK_THAT(log, Catch::Contains("4 cells recorded by another model version run again (0123456789ab: 4; this "
                                  "autoddl: " + std::string(model_version()) + "); --reuse keeps them"));
  CHECK_THAT(log, Catch::Contains("0 done before, 4 run (4 ok, 0 failed)"));
  CHECK(line_count(results) == 8);
  const auto latest = latest_rows(read_result_rows(out), model_version());
  for (const auto& [k, r] : latest) CHECK(row_model_version(r.row) == model_version());
  const json summary = json::parse(read_all(out + "/run.json"));
  CHECK(summary["recomputed_other_version"] == json({{"0123456789ab", 4}}));
  CHECK(summary["model_version"] == model_version());
  // Rows from before rows recorded a version are stale too; then a plain rerun runs nothing.
  fake_older_rows(results, "");
  REQUIRE(run_autoddl({"sweep", "run", cfg, "--out", out}, d + "/log3") == 0);
  CHECK_THAT(read_all(d + "/log3"), Catch::Contains("run again ((unrecorded): 4;"));
  REQUIRE(run_autoddl({"sweep", "run", cfg, "--out", out}, d + "/log4") == 0);
  CHECK_THAT(read_all(d + "/log4"), Catch::Contains("4 done before, 0 run"));
  fs::remove_all(d);
}

TEST_CASE("a rerun with --reuse keeps the rows of another model version and lists them in the output and run.json",
          "[experiments][sweep][version]") {
  const std::string d = scratch("reuse");
  const std::string cfg = write_config(d, small_config());
  const std::string out = d + "/out", results = out + "/results.jsonl";
  REQUIRE(run_autoddl({"sweep", "run", cfg, "--out", out}, d + "/log1") == 0);
  fake_older_rows(results, "0123456789ab");
  REQUIRE(run_autoddl({"sweep", "run", cfg, "--out", out, "--reuse"}, d + "/log2") == 0);
  const std::string log = read_all(d + "/log2");
  CHECK_THAT(log, Catch::Contains("4 done before, 0 run"));
  CHECK_THAT(log, Catch::Contains("reused 4 cells of another model version (0123456789ab: 4; this autoddl: " +
                                  std::string(model_version()) + "); their keys are in " + out + "/run.json"));
  CHECK(line_count(results) == 4);
  const json summary = json::parse(read_all(out + "/run.json"));
  REQUIRE(summary["reused"].size() == 1);
  CHECK(summary["reused"][0]["model_version"] == "0123456789ab");
  CHECK(summary["reused"][0]["cells"] == 4);
  std::vector<std::string> keys = summary["reused"][0]["keys"], recorded;
  for (const auto& r : read_result_rows(out)) recorded.push_back(r.key());
  std::sort(keys.begin(), keys.end());
  std::sort(recorded.begin(), recorded.end());
  CHECK(keys == recorded);
  // status names the stale version; a rerun without --reuse then recomputes the four.
  REQUIRE(run_autoddl({"sweep", "status", out}, d + "/status") == 0);
  CHECK_THAT(read_all(d + "/status"),
             Catch::Contains("model version 0123456789ab: 4 cells (stale: `sweep run` recomputes them unless --reuse)"));
  REQUIRE(run_autoddl({"sweep", "run", cfg, "--out", out}, d + "/log3") == 0);
  CHECK(line_count(results) == 8);
  fs::remove_all(d);
}

TEST_CASE("a row of this model version stands over another version's even when it failed", "[experiments][version]") {
  const std::string dir = scratch("tiers");
  {
    ResultLog log(dir + "/results.jsonl");
    log.append({{"key", "a"}, {"status", "ok"}, {"model_version", "old"}});
    log.append({{"key", "a"}, {"status", "failed"}, {"model_version", "new"}});
    log.append({{"key", "b"}, {"status", "ok"}, {"model_version", "new"}});
    log.append({{"key", "b"}, {"status", "ok"}, {"model_version", "old"}});
  }
  const auto rows = read_result_rows(dir);
  auto mine = latest_rows(rows, "new");
  CHECK(mine.at("a").row["status"] == "failed");
  CHECK(mine.at("b").row["model_version"] == "new");
  auto any = latest_rows(rows);  // no version given: the last ok row stands, as before versions
  CHECK(any.at("a").row["status"] == "ok");
  CHECK(any.at("b").row["model_version"] == "old");
  fs::remove_all(dir);
}

TEST_CASE("merge takes this model version's row of a cell a folder holds in two versions, not a duplicate",
          "[experiments][sweep][version]") {
  const std::string d = scratch("mergever");
  const std::string cfg = write_config(d, small_config());
  REQUIRE(run_autoddl({"sweep", "run", cfg, "--out", d + "/a"}, d + "/log1") == 0);
  fake_older_rows(d + "/a/results.jsonl", "0123456789ab");
  REQUIRE(run_autoddl({"sweep", "run", cfg, "--out", d + "/a"}, d + "/log2") == 0);  // appends this version's
  const MergeSummary m = merge_sweeps({d + "/a"}, d + "/m");
  CHECK(m.ok == 4);
  for (const auto& r : read_result_rows(d + "/m")) CHECK(row_model_version(r.row) == model_version());
  fs::remove_all(d);
}
