// `autoddl sweep plot` (sweep_plot.hpp): checks the folder and the output path here, so a wrong
// path gets autoddl's one-line error, then runs experiments/figures/sweep_plot.py with python3.
// The script is looked for next to the binary (an install's share/autoddl/figures, or the
// source tree the build folder sits in) and in the source tree the binary was built from.
#ifdef AUTODDL_HAVE_EXPERIMENTS
#include "sweep_plot.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/experiments/results.hpp"
#include "autoddl/experiments/version.hpp"

extern char** environ;

namespace autoddl::cli {
namespace {

namespace fs = std::filesystem;

const char* const kNeedMatplotlib = "python3 with matplotlib is needed: apt-get install python3-matplotlib";

// The folder holding sweep_plot.py and the sweeplib it imports.
std::string find_script() {
  std::vector<fs::path> dirs;
  if (const char* d = std::getenv("AUTODDL_FIGURES_DIR")) dirs.emplace_back(d);
  std::error_code ec;
  const fs::path exe = fs::canonical("/proc/self/exe", ec).parent_path();
  if (!ec) {
    dirs.push_back(exe / "../share/autoddl/figures");
    dirs.push_back(exe / "../experiments/figures");
  }
#ifdef AUTODDL_SOURCE_DIR
  dirs.emplace_back(AUTODDL_SOURCE_DIR "/experiments/figures");
#endif
  std::string looked;
  for (const fs::path& d : dirs) {
    const fs::path script = d / "sweep_plot.py";
    if (fs::is_regular_file(script, ec)) return fs::weakly_canonical(script, ec).string();
    looked += (looked.empty() ? "" : ", ") + d.lexically_normal().string();
  }
  throw InputError("sweep plot", "", "cannot find the plot script sweep_plot.py (looked in " + looked +
                                         "); set AUTODDL_FIGURES_DIR to autoddl's experiments/figures");
}

// $AUTODDL_PYTHON, else Debian's /usr/bin/python3 (which python3-matplotlib installs into; a
// pyenv or venv python3 first on PATH often lacks it), else python3 on PATH.
std::string find_python() {
  if (const char* p = std::getenv("AUTODDL_PYTHON"); p && *p) return p;
  if (access("/usr/bin/python3", X_OK) == 0) return "/usr/bin/python3";
  if (const char* path = std::getenv("PATH")) {
    std::string rest = path;
    while (!rest.empty()) {
      const size_t colon = rest.find(':');
      const std::string dir = rest.substr(0, colon);
      rest = colon == std::string::npos ? "" : rest.substr(colon + 1);
      const std::string cand = (dir.empty() ? "." : dir) + "/python3";
      if (access(cand.c_str(), X_OK) == 0) return cand;
    }
  }
  throw InputError("sweep plot", "", std::string(kNeedMatplotlib) + " (no python3 found)");
}

void check_inputs(const SweepPlotOptions& o) {
  std::error_code ec;
  if (!fs::exists(o.dir, ec)) throw InputError(o.dir, "", "no such sweep folder");
  if (!fs::is_directory(o.dir, ec)) throw InputError(o.dir, "", "not a folder (give the sweep's output folder)");
  experiments::read_sweep_manifest(o.dir);  // "not a sweep directory (no sweep.json)"
  if (experiments::read_result_rows(o.dir).empty()) {
    throw InputError(o.dir, "results*.jsonl", "no results yet: run `autoddl sweep run` into this folder first");
  }
  const std::string ext = fs::path(o.out).extension().string();
  if (ext != ".png" && ext != ".svg" && ext != ".pdf") {
    throw InputError("--out", "", o.out + ": the file type comes from its extension, one of .png, .svg, .pdf");
  }
  if (fs::is_directory(o.out, ec)) throw InputError("--out", "", o.out + " is a folder; give a file name");
  const fs::path parent = fs::path(o.out).parent_path();
  if (!parent.empty()) {
    fs::create_directories(parent, ec);
    if (!fs::is_directory(parent)) throw InputError("--out", "", "cannot create the folder " + parent.string());
  }
}

}  // namespace

CLI::App* add_sweep_plot(CLI::App& sweep, SweepPlotOptions& o) {
  CLI::App* plot = sweep.add_subcommand(
      "plot", "Plot a sweep folder's results (python3 with matplotlib): speedup, parity or time per cell");
  plot->add_option("dir", o.dir, "Sweep folder (sweep.json and results*.jsonl)")->required();
  plot->add_option("--kind", o.kind,
                   "speedup: each method's speedup over the best baseline per cell; parity: simulated against "
                   "analytical time (cells of the sim evaluator); time: iteration time per cell and method")
      ->check(CLI::IsMember({"speedup", "parity", "time"}))
      ->capture_default_str();
  plot->add_option("--out", o.out, "Image to write: .png, .svg or .pdf (written whole or not at all)")->required();
  plot->add_option("--baseline", o.baseline,
                   "speedup: comma-separated methods or schemes to compare against (default: every one that is "
                   "not a search method)");
  return plot;
}

int run_sweep_plot(const SweepPlotOptions& o) {
  check_inputs(o);
  const std::string script = find_script(), python = find_python();
  std::vector<std::string> args = {python, script, o.dir, "--kind", o.kind, "--out", o.out};
  if (!o.baseline.empty()) args.insert(args.end(), {"--baseline", o.baseline});
  // The script marks cells of another model version than this binary's as stale on the plot.
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e) env_text.emplace_back(*e);
  env_text.push_back(std::string("AUTODDL_MODEL_VERSION=") + experiments::model_version());
  env_text.push_back(std::string("AUTODDL_VERSION=") + experiments::autoddl_version());
  env_text.push_back("PYTHONDONTWRITEBYTECODE=1");  // no __pycache__ next to an installed script
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::fflush(stdout);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, python.c_str(), nullptr, nullptr, argv.data(), envp.data());
  if (rc != 0) {
    throw InputError("sweep plot", "", std::string(kNeedMatplotlib) + " (cannot run " + python + ")");
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status)) throw InputError("sweep plot", "", python + " " + script + " was killed");
  // A python3 without matplotlib: the script says so in autoddl's one-line form and exits 2.
  return WEXITSTATUS(status);  // the script printed its own one-line error
}

}  // namespace autoddl::cli
#endif  // AUTODDL_HAVE_EXPERIMENTS
