// The sweep runner's process pool (see runner.hpp): expand, pick this shard's cells, skip the
// ones already recorded, then keep `jobs` forked workers busy and append each finished cell's
// row. Only this process writes the results file, so rows never interleave.
#include "autoddl/experiments/runner.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <deque>
#include <filesystem>
#include <map>
#include <thread>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/experiments/results.hpp"
#include "progress.hpp"

namespace autoddl::experiments {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

std::string host_name() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "host";
  return buf;
}

// Work folders are work/<host>-<pid>/<key>; a folder left by a killed run on this host (its pid
// gone) is removed. Folders of other hosts (other Slurm tasks on a shared file system) stay.
void clean_stale_work(const fs::path& work, const std::string& host) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(work, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(host + "-", 0) != 0) continue;
    const std::string pid_text = name.substr(host.size() + 1);
    if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
    if (pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH) fs::remove_all(e.path(), ec);
  }
}

struct Running {
  Cell cell;
  Clock::time_point start;
  std::string work_dir;
};

// Forks the worker of one cell: it runs the cell's steps and leaves row.json in its folder.
pid_t start_worker(const Cell& cell, const std::string& binary, const std::string& work_dir) {
  fs::create_directories(work_dir);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid > 0) setpgid(pid, pid);  // both sides set the group, so a timeout's kill(-pid) never misses
  if (pid != 0) return pid;
  // The worker: its own process group (a timeout kills it with its autoddl child), and it
  // dies with the sweep.
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);
  signal(SIGINT, SIG_DFL);
  try {
    json r = run_cell_steps(cell, binary, work_dir);
    write_json_atomic(work_dir + "/row.json", r, -1);
  } catch (const std::exception& e) {
    try {
      write_json_atomic(work_dir + "/row.json", {{"status", "failed"}, {"error", e.what()}, {"results", json::object()}}, -1);
    } catch (...) {
    }
  }
  _exit(0);
}

std::map<std::string, int> reused_counts(const RunSummary& s) {
  std::map<std::string, int> out;
  for (const auto& [v, keys] : s.reused) out[v] = static_cast<int>(keys.size());
  return out;
}

// DIR/run.json: what the last run of this shard did, and which rows of another model version it
// kept (--reuse) or recomputed; the figure scripts and `sweep status` read rows, not this file.
void write_run_summary(const RunSummary& s, const SweepConfig& config, const RunOptions& opt, const std::string& started) {
  json reused = json::array();
  for (const auto& [v, keys] : s.reused) reused.push_back({{"model_version", v}, {"cells", keys.size()}, {"keys", keys}});
  const json j = {{"sweep", config.name}, {"config_file", config.file}, {"autoddl_version", autoddl_version()},
                  {"model_version", model_version()}, {"started_utc", started}, {"finished_utc", utc_now_text()},
                  {"shard", std::to_string(opt.shard_index) + "/" + std::to_string(opt.shard_count)},
                  {"cells", s.cells}, {"done_before", s.already}, {"ran", s.ran}, {"ok", s.ok}, {"failed", s.failed},
                  {"reuse", opt.reuse}, {"recomputed_other_version", s.stale_rerun}, {"reused", reused},
                  {"wall_s", s.wall_s}};
  write_json_atomic(s.summary_file, j, 1);
}

}  // namespace

int RunSummary::reused_count() const {
  int n = 0;
  for (const auto& [v, keys] : reused) n += static_cast<int>(keys.size());
  return n;
}

std::string run_summary_file_name(int shard_index, int shard_count) {
  if (shard_count <= 1) return "run.json";
  return "run.shard-" + std::to_string(shard_index) + "-of-" + std::to_string(shard_count) + ".json";
}

std::string version_counts_text(const std::map<std::string, int>& counts) {
  std::string out;
  for (const auto& [v, n] : counts) {
    out += (out.empty() ? "" : ", ") + (v.empty() ? std::string("(unrecorded)") : v) + ": " + std::to_string(n);
  }
  return out;
}

RunSummary run_sweep(const SweepConfig& config, const RunOptions& opt) {
  RunSummary sum;
  const auto t0 = Clock::now();
  const std::string dir = opt.out_dir.empty() ? config.output : opt.out_dir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir)) throw InputError(dir, "", "cannot create the output directory");
  if (opt.jobs < 1) throw InputError("--jobs", "", "must be >= 1");

  const std::vector<Cell> all = expand_cells(config);
  write_sweep_manifest(dir, config, all);
  const std::vector<Cell> mine = shard_cells(all, opt.shard_index, opt.shard_count);
  sum.cells = static_cast<int>(mine.size());

  ResultLog log(dir + "/" + results_file_name(opt.shard_index, opt.shard_count));  // trims a torn line first
  sum.results_file = log.path();
  if (log.torn_line() > 0) {
    std::fprintf(opt.progress, "autoddl: note: %s\n", torn_line_note(log.path(), log.torn_line(), "its cell runs again").c_str());
  }
  // Done = recorded in any results file of the folder (other shards' too) by this model version;
  // a row of another version is recomputed, or kept with --reuse.
  const std::string current = model_version();
  const auto latest = latest_rows(read_result_rows(dir), current);
  std::deque<Cell> todo;
  for (const Cell& c : mine) {
    auto it = latest.find(c.key);
    if (it == latest.end()) {
      todo.push_back(c);
      continue;
    }
    const std::string v = row_model_version(it->second.row);
    if (v != current && !opt.reuse) {
      ++sum.stale_rerun[v];
      todo.push_back(c);
    } else if (it->second.ok() || !opt.retry_failed) {
      ++sum.already;
      if (v != current) sum.reused[v].push_back(c.key);
    } else {
      todo.push_back(c);
    }
  }
  sum.summary_file = dir + "/" + run_summary_file_name(opt.shard_index, opt.shard_count);
  if (!sum.stale_rerun.empty()) {
    int n = 0;
    for (const auto& [v, k] : sum.stale_rerun) n += k;
    std::fprintf(opt.progress,
                 "sweep %s: %d cell%s recorded by another model version run again (%s; this autoddl: %s); "
                 "--reuse keeps them\n",
                 config.name.c_str(), n, n == 1 ? "" : "s", version_counts_text(sum.stale_rerun).c_str(),
                 current.c_str());
  }
  if (!sum.reused.empty()) {
    std::fprintf(opt.progress, "sweep %s: reusing %d cell%s recorded by another model version (%s; this autoddl: %s), listed in %s\n",
                 config.name.c_str(), sum.reused_count(), sum.reused_count() == 1 ? "" : "s",
                 version_counts_text(reused_counts(sum)).c_str(), current.c_str(), sum.summary_file.c_str());
  }

  const bool tty = opt.tty < 0 ? isatty(fileno(opt.progress)) : opt.tty == 1;
  double estimate_s = 0;
  for (const Cell& c : todo) estimate_s += estimated_cell_s(c.inputs);
  std::fprintf(opt.progress, "sweep %s: %d cells%s, %d done before, %d to run with %d job%s (estimate %s) -> %s\n",
               config.name.c_str(), sum.cells,
               opt.shard_count > 1 ? (" in shard " + std::to_string(opt.shard_index) + "/" +
                                      std::to_string(opt.shard_count) + " (of " + std::to_string(all.size()) + ")")
                                         .c_str()
                                   : "",
               sum.already, static_cast<int>(todo.size()), opt.jobs, opt.jobs == 1 ? "" : "s",
               duration_text(estimate_s / opt.jobs).c_str(), log.path().c_str());
  std::fflush(opt.progress);
  const std::string started = utc_now_text();
  if (todo.empty()) {
    sum.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
    write_run_summary(sum, config, opt, started);
    return sum;
  }

  const std::string host = host_name();
  const fs::path work = fs::path(dir) / "work";
  clean_stale_work(work, host);
  const std::string run_work = (work / (host + "-" + std::to_string(getpid()))).string();
  Progress progress(opt.progress, tty, sum.cells, sum.already);
  std::map<pid_t, Running> running;
  const std::string shard_text = std::to_string(opt.shard_index) + "/" + std::to_string(opt.shard_count);

  auto record = [&](const Running& r, json result, double wall_s) {
    json row = {{"key", r.cell.key}, {"inputs", r.cell.inputs}, {"status", result.value("status", "failed")},
                {"results", result.value("results", json::object())}, {"wall_s", wall_s},
                {"autoddl_version", autoddl_version()}, {"model_version", model_version()}, {"finished_utc", utc_now_text()}, {"host", host},
                {"shard", shard_text}};
    if (result.contains("error")) row["error"] = result["error"];
    log.append(row);
    const bool ok = row["status"] == "ok";
    ++sum.ran;
    (ok ? sum.ok : sum.failed) += 1;
    progress.finished(ok, wall_s, static_cast<int>(running.size()), describe(r.cell.inputs),
                      row.value("error", std::string()));
    fs::remove_all(r.work_dir, ec);
  };

  while (!todo.empty() || !running.empty()) {
    while (!todo.empty() && static_cast<int>(running.size()) < opt.jobs) {
      Cell c = todo.front();
      todo.pop_front();
      const std::string wd = run_work + "/" + c.key;
      fs::remove_all(wd, ec);
      const pid_t pid = start_worker(c, opt.binary, wd);
      if (pid < 0) throw InputError("sweep", "", "cannot fork a worker");
      running[pid] = {c, Clock::now(), wd};
      progress.started(static_cast<int>(running.size()));
    }
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0 && running.count(pid)) {
      Running r = running[pid];
      running.erase(pid);
      const double wall = std::chrono::duration<double>(Clock::now() - r.start).count();
      json result;
      if (fs::is_regular_file(r.work_dir + "/row.json")) {
        result = json::parse(read_text_file(r.work_dir + "/row.json"), nullptr, false);
      }
      if (!result.is_object()) {
        result = {{"status", "failed"},
                  {"error", WIFSIGNALED(status) ? "worker killed by signal " + std::to_string(WTERMSIG(status))
                                                : "worker left no result"}};
      }
      record(r, result, wall);
      continue;
    }
    // Timeouts: kill the worker's process group; its row says so.
    for (auto it = running.begin(); it != running.end();) {
      const double wall = std::chrono::duration<double>(Clock::now() - it->second.start).count();
      if (wall > config.cell_timeout_s) {
        kill(-it->first, SIGKILL);
        waitpid(it->first, &status, 0);
        Running r = it->second;
        it = running.erase(it);
        record(r, {{"status", "failed"}, {"error", "timed out after " + duration_text(config.cell_timeout_s) +
                                                        " (cell_timeout_s)"}},
               wall);
      } else {
        ++it;
      }
    }
    progress.tick(static_cast<int>(running.size()));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  progress.done();
  fs::remove_all(run_work, ec);
  sum.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  write_run_summary(sum, config, opt, started);
  return sum;
}

}  // namespace autoddl::experiments
