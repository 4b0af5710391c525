// `autoddl sweep run` end to end on the real binary: a full run, a run killed with SIGKILL and
// resumed, two shards merged, a failing cell, and a bad config. The cells are quick
// `autoddl cost` runs (sweep_fixture.hpp), so the results of two runs are equal.
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include "autoddl/experiments/merge.hpp"
#include "sweep_fixture.hpp"

using namespace sweep_test;
using namespace autoddl::experiments;

namespace {

// One uninterrupted run, shared by the tests that compare against it.
const std::string& full_run() {
  static const std::string dir = [] {
    const std::string d = scratch("full");
    const std::string cfg = write_config(d, cost_config());
    REQUIRE(run_autoddl({"sweep", "run", cfg, "--out", d + "/out", "--jobs", "2"}, d + "/log") == 0);
    return d + "/out";
  }();
  return dir;
}

}  // namespace

TEST_CASE("a sweep records one ok row per cell and a rerun runs nothing", "[experiments][sweep]") {
  std::map<std::string, int> count;
  const auto rows = comparable_rows(full_run(), &count);
  CHECK(rows.size() == 64);
  // The count and an estimate before the first cell: 64 analytical cells at 0.1 s on 2 jobs.
  CHECK(read_all(full_run() + "/../log").find("64 cells, 0 done before, 64 to run with 2 jobs (estimate 3 s)") !=
        std::string::npos);
  for (const auto& [k, n] : count) CHECK(n == 1);
  for (const auto& [k, r] : rows) {
    CHECK(r["status"] == "ok");
    CHECK(r["results"]["cost"]["iteration_s"].get<double>() > 0);
    CHECK(r["autoddl_version"].get<std::string>().size() > 0);
  }
  const std::string log = full_run() + "/../rerun.log";
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE(run_autoddl({"sweep", "run", full_run() + "/../config.json", "--out", full_run()}, log) == 0);
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 1.0);
  CHECK(read_all(log).find("64 done before, 0 to run with 1 job (estimate 0 s)") != std::string::npos);
  CHECK(read_all(log).find("64 done before, 0 run") != std::string::npos);
  CHECK(line_count(full_run() + "/results.jsonl") == 64);
}

TEST_CASE("a sweep killed with SIGKILL resumes to the same rows as an uninterrupted run with none twice",
          "[experiments][sweep]") {
  const std::string d = scratch("kill");
  const std::string cfg = write_config(d, cost_config());
  const std::string out = d + "/out", results = out + "/results.jsonl";
  const pid_t pid = spawn_autoddl({"sweep", "run", cfg, "--out", out, "--jobs", "2"}, d + "/log1");
  // Kill it once a few cells are recorded and well before all 64 are.
  const auto t0 = std::chrono::steady_clock::now();
  while (line_count(results) < 5 && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  REQUIRE(kill(pid, SIGKILL) == 0);
  CHECK(wait_exit(pid) == 128 + SIGKILL);
  const int before = line_count(results);
  INFO("rows when killed: " << before);
  REQUIRE(before >= 5);
  REQUIRE(before < 64);  // the kill really interrupted the sweep
  REQUIRE(run_autoddl({"sweep", "run", cfg, "--out", out, "--jobs", "2"}, d + "/log2") == 0);
  CHECK(read_all(d + "/log2").find(std::to_string(before) + " done before") != std::string::npos);
  std::map<std::string, int> count;
  const auto resumed = comparable_rows(out, &count);
  CHECK(line_count(results) == 64);
  for (const auto& [k, n] : count) CHECK(n == 1);
  CHECK(resumed == comparable_rows(full_run()));
  // The killed run's workers died with it: no work folder of a dead run is left behind.
  CHECK(fs::is_empty(out + "/work"));
  fs::remove_all(d);
}

TEST_CASE("two shards merged equal one full run and one shard alone lists the other's cells as missing",
          "[experiments][sweep]") {
  const std::string d = scratch("shards");
  const std::string cfg = write_config(d, cost_config());
  REQUIRE(run_autoddl({"sweep", "run", cfg, "--out", d + "/s0", "--shard", "0/2"}, d + "/log0") == 0);
  REQUIRE(run_autoddl({"sweep", "run", cfg, "--out", d + "/s1", "--shard", "1/2", "--jobs", "2"}, d + "/log1") == 0);
  CHECK(fs::exists(d + "/s0/results.shard-0-of-2.jsonl"));
  const auto a = comparable_rows(d + "/s0"), b = comparable_rows(d + "/s1");
  CHECK(a.size() == 32);
  CHECK(b.size() == 32);
  REQUIRE(run_autoddl({"sweep", "merge", d + "/s0", d + "/s1", "--out", d + "/m"}, d + "/logm") == 0);
  CHECK(read_all(d + "/logm").find("64 cells, 64 ok, 0 failed, 0 missing") != std::string::npos);
  CHECK(comparable_rows(d + "/m") == comparable_rows(full_run()));

  const MergeSummary half = merge_sweeps({d + "/s0"}, d + "/half");
  CHECK(half.ok == 32);
  REQUIRE(half.missing.size() == 32);
  for (const auto& m : half.missing) CHECK(b.count(m["key"].get<std::string>()) == 1);

  // Merging a shard twice is refused: its cells would be there twice.
  fs::copy(d + "/s0", d + "/s0copy", fs::copy_options::recursive);
  auto dup = [&] { merge_sweeps({d + "/s0", d + "/s0copy"}, d + "/dup"); };
  CHECK_THROWS_WITH(dup(), Catch::Contains("duplicate"));
  CHECK_FALSE(fs::exists(d + "/dup/results.jsonl"));
  CHECK(run_autoddl({"sweep", "merge", d + "/s0", d + "/s0copy", "--out", d + "/dup"}, d + "/logd") == 2);
  CHECK(read_all(d + "/logd").rfind("autoddl: error: ", 0) == 0);
  fs::remove_all(d);
}

TEST_CASE("a failing cell is recorded with its error and the sweep goes on", "[experiments][sweep]") {
  const std::string d = scratch("fail");
  json c = cost_config();
  c["models"][0]["knobs"]["layers"] = 2;
  // tp=16 fits 16 GPUs only; on 2, 4 and 8 GPUs autoddl cost refuses it (exit 2).
  c["tasks"][0]["schemes"] = json::array({"dp", "megatron:tp=16,pp=1,dp=1"});
  const std::string cfg = write_config(d, c);
  REQUIRE(run_autoddl({"sweep", "run", cfg, "--out", d + "/out"}, d + "/log") == 0);
  const auto rows = comparable_rows(d + "/out");
  REQUIRE(rows.size() == 8);
  int failed = 0;
  for (const auto& [k, r] : rows) {
    if (r["status"] == "ok") continue;
    ++failed;
    CHECK(r["inputs"]["scheme"] == "megatron:tp=16,pp=1,dp=1");
    CHECK(r["inputs"]["gpus"].get<int>() < 16);
    CHECK_THAT(r["error"].get<std::string>(), Catch::Contains("autoddl cost exited 2") && Catch::Contains("tp*pp*dp"));
  }
  CHECK(failed == 3);
  const SweepStatus st = sweep_status(d + "/out");
  CHECK(st.ok == 5);
  CHECK(st.failed == 3);
  CHECK(st.missing.empty());
  // A rerun keeps recorded failures (they are results); --retry-failed runs them again.
  REQUIRE(run_autoddl({"sweep", "run", cfg, "--out", d + "/out"}, d + "/log2") == 0);
  CHECK(line_count(d + "/out/results.jsonl") == 8);
  REQUIRE(run_autoddl({"sweep", "run", cfg, "--out", d + "/out", "--retry-failed"}, d + "/log3") == 0);
  CHECK(line_count(d + "/out/results.jsonl") == 11);
  fs::remove_all(d);
}

TEST_CASE("a bad config stops the sweep before any cell runs and names the field with exit 2", "[experiments][sweep]") {
  const std::string d = scratch("bad");
  json c = cost_config();
  c["clusters"][0]["gpus"] = json::array({2, 12});
  const std::string cfg = write_config(d, c);
  CHECK(run_autoddl({"sweep", "run", cfg, "--out", d + "/out"}, d + "/log") == 2);
  CHECK(read_all(d + "/log") == "autoddl: error: " + cfg +
                                     ": clusters[0].gpus[1]: 12 GPUs is not a whole number of dgx-a100 nodes (8 GPUs "
                                     "each)\n");
  CHECK_FALSE(fs::exists(d + "/out"));
  fs::remove_all(d);
}

TEST_CASE("the Slurm script runs one shard per array task and the shards together are the full run",
          "[experiments][sweep][slurm]") {
  const std::string d = scratch("slurm");
  const std::string cfg = write_config(d, cost_config());
  const std::string script = std::string(AUTODDL_SOURCE_DIR) + "/experiments/slurm/sweep.sbatch";
  for (int task = 1; task <= 2; ++task) {  // --array=1-2: shards 0/2 and 1/2
    const std::string cmd = "env AUTODDL=" + std::string(AUTODDL_BINARY) + " SLURM_ARRAY_TASK_ID=" +
                            std::to_string(task) + " SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=2 " +
                            "SLURM_CPUS_PER_TASK=2 bash " + script + " " + cfg + " " + d + "/out > " + d + "/log" +
                            std::to_string(task) + " 2>&1";
    REQUIRE(std::system(cmd.c_str()) == 0);
  }
  CHECK(fs::exists(d + "/out/results.shard-0-of-2.jsonl"));
  CHECK(fs::exists(d + "/out/results.shard-1-of-2.jsonl"));
  CHECK(comparable_rows(d + "/out") == comparable_rows(full_run()));
  const SweepStatus st = sweep_status(d + "/out");
  CHECK(st.ok == 64);
  CHECK(st.missing.empty());
  // Outside an array task the script refuses to run.
  CHECK(std::system(("bash " + script + " " + cfg + " " + d + "/x > /dev/null 2>&1").c_str()) != 0);
  fs::remove_all(d);
}

TEST_CASE("a cell over its time limit is killed and recorded as timed out", "[experiments][sweep]") {
  const std::string d = scratch("timeout");
  json c = cost_config();
  c["clusters"][0]["gpus"] = 8;
  // CD over every mesh of a 96-layer GPT (hidden 2048, seq 2048) on 8 GPUs runs for about 12 s
  // on one core, against a limit of 2 s.
  c["tasks"] = json::parse(R"([{"search": ["cd-mesh"], "time_limit_s": 30}, {"schemes": ["dp"]}])");
  c["models"][0]["knobs"]["layers"] = 96;
  c["models"][0]["knobs"]["hidden"] = 2048;
  c["models"][0]["knobs"]["heads"] = 16;
  c["models"][0]["knobs"]["seq"] = 2048;
  c["models"][0]["knobs"]["batch"] = 64;
  c["cell_timeout_s"] = 2;
  const std::string cfg = write_config(d, c);
  REQUIRE(run_autoddl({"sweep", "run", cfg, "--out", d + "/out", "--jobs", "2"}, d + "/log") == 0);
  const auto rows = comparable_rows(d + "/out");
  REQUIRE(rows.size() == 2);
  for (const auto& [k, r] : rows) {
    if (r["inputs"]["task"] == "search") {
      CHECK(r["status"] == "failed");
      CHECK_THAT(r["error"].get<std::string>(), Catch::Contains("timed out"));
    } else {
      CHECK(r["status"] == "ok");
    }
  }
  fs::remove_all(d);
}
