// One cell's work: run its autoddl steps (cell_steps) one after another, each as a child
// process writing --json into the cell's work folder, and gather what they wrote (sync_rank and
// sync_transfer cells are computed in this process instead: sync_cells.hpp). Large parts
// that no figure reads (per-op rows, the best scheme's full JSON) are dropped to keep rows small.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/experiments/runner.hpp"
#include "autoddl/experiments/sync_cells.hpp"

namespace autoddl::experiments {

using nlohmann::json;

namespace {

// fork + exec with stdout/stderr to files; the child dies with us (PDEATHSIG). Returns the
// exit status, 128 + signal, or -1 if it could not start.
int run_child(const std::string& binary, const std::vector<std::string>& args, const std::string& out,
              const std::string& err) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(binary.c_str()));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0) _exit(127);
    dup2(o, 1);
    dup2(e, 2);
    execv(binary.c_str(), argv.data());
    const std::string why = "cannot run " + binary + ": " + std::strerror(errno) + "\n";
    if (::write(2, why.data(), why.size()) < 0) _exit(127);
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The last non-empty line of a file (the `autoddl: error: ...` line of a failed step).
std::string last_line(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  return last;
}

void trim(const std::string& step, json& j) {
  if (step == "cost") j.erase("per_op");
  if (step == "sync_search" && j.contains("best")) j["best"].erase("strategy");  // the strategy file is large
  if (step == "search") {
    if (j.contains("best")) j["best"].erase("scheme_json");
    if (j.contains("results")) {
      for (json& r : j["results"]) r.erase("details");
    }
    if (j.contains("best")) j["best"].erase("details");
  }
}

}  // namespace

json run_cell_steps(const Cell& cell, const std::string& binary, const std::string& work_dir) {
  json out = {{"status", "ok"}, {"results", json::object()}};
  if (!cell.error.empty()) return {{"status", "failed"}, {"error", cell.error}, {"results", json::object()}};
  const std::string task = cell.inputs.value("task", "");
  if (task == "sync_rank" || task == "sync_transfer") {  // computed here, from dataset records
    try {
      out["results"] = run_sync_learning_cell(cell.inputs);
    } catch (const InputError& e) {
      return {{"status", "failed"}, {"error", task + ": " + e.what()}, {"results", json::object()}};
    }
    return out;
  }
  if (cell.inputs.contains("gpus_per_node")) {
    // Fewer GPUs than a node holds: the same cluster with gpus_per_node lowered to them.
    costmodel::ClusterSpec c = costmodel::resolve_cluster(cell.inputs.at("cluster").get<std::string>());
    c.gpus_per_node = cell.inputs.at("gpus_per_node").get<int>();
    c.nodes = 1;
    c.description += " (sweep: " + std::to_string(c.gpus_per_node) + " GPUs of one node)";
    write_json_atomic(work_dir + "/cluster.json", costmodel::cluster_to_json(c));
  }
  for (const Step& s : cell_steps(cell.inputs, work_dir)) {
    const std::string json_path = work_dir + "/" + s.name + ".json";
    const int rc = run_child(binary, s.args, work_dir + "/" + s.name + ".out", work_dir + "/" + s.name + ".err");
    if (rc != 0) {
      std::string why = last_line(work_dir + "/" + s.name + ".err");
      if (why.empty()) why = last_line(work_dir + "/" + s.name + ".out");
      std::ostringstream msg;
      msg << "autoddl " << s.name << " " << (rc < 0 ? "did not start" : rc > 128 ? "killed by signal " + std::to_string(rc - 128) : "exited " + std::to_string(rc));
      if (!why.empty()) msg << ": " << why;
      out["status"] = "failed";
      out["error"] = msg.str();
      return out;
    }
    try {
      json j = read_json_file(json_path);
      trim(s.name, j);
      out["results"][s.name] = std::move(j);
    } catch (const InputError& e) {
      out["status"] = "failed";
      out["error"] = std::string("autoddl ") + s.name + " wrote no readable JSON: " + e.what();
      return out;
    }
  }
  return out;
}

}  // namespace autoddl::experiments
