// Helpers for the end-to-end sweep tests: scratch folders, a small config whose cells are
// quick `autoddl cost` runs, running the autoddl binary, and rows compared without the fields
// that differ between runs (wall time, clock, host, shard).
#pragma once
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autoddl/experiments/results.hpp"

namespace sweep_test {

namespace fs = std::filesystem;
using nlohmann::json;

inline std::string scratch(const std::string& tag) {
  std::string tmpl = (fs::temp_directory_path() / ("autoddl-sweep-" + tag + "-XXXXXX")).string();
  REQUIRE(mkdtemp(tmpl.data()) != nullptr);
  return tmpl;
}

inline std::string write_config(const std::string& dir, const json& j) {
  const std::string path = dir + "/config.json";
  std::ofstream(path) << j.dump(2);
  return path;
}

// 4 layer counts x 4 cluster sizes x 4 schemes = 64 analytical cells of a small GPT: each is
// one `autoddl cost` run (tens of ms), deterministic, so two runs give equal results.
inline json cost_config() {
  return json::parse(R"({
    "name": "e2e",
    "models": [{"name": "gpt", "knobs": {"layers": [1, 2, 3, 4], "hidden": 256, "heads": 4, "seq": 128,
                                         "vocab": 1000, "batch": "{gpus*2}"}}],
    "clusters": [{"name": "dgx-a100", "gpus": [2, 4, 8, 16]}],
    "tasks": [{"schemes": ["dp", "zero1", "zero3", "megatron:tp={gpus_per_node},pp=1,dp={nodes}"]}]
  })");
}

// Starts autoddl with `args`; stdout and stderr go to `log`.
inline pid_t spawn_autoddl(const std::vector<std::string>& args, const std::string& log) {
  std::vector<std::string> all = {AUTODDL_BINARY};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = -1;
  REQUIRE(posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

inline int wait_exit(pid_t pid) {
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

inline int run_autoddl(const std::vector<std::string>& args, const std::string& log) {
  return wait_exit(spawn_autoddl(args, log));
}

inline std::string read_all(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// key -> the row without run-dependent fields; also counts rows per key.
inline std::map<std::string, json> comparable_rows(const std::string& dir, std::map<std::string, int>* count = nullptr) {
  std::map<std::string, json> out;
  for (const auto& r : autoddl::experiments::read_result_rows(dir)) {
    json row = r.row;
    for (const char* k : {"wall_s", "finished_utc", "host", "shard"}) row.erase(k);
    if (count) (*count)[r.key()] += 1;
    out[r.key()] = row;
  }
  return out;
}

inline int line_count(const std::string& path) {
  const std::string t = read_all(path);
  return static_cast<int>(std::count(t.begin(), t.end(), '\n'));
}

}  // namespace sweep_test
