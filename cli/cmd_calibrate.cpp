// `autoddl calibrate`: runs calib's GPU microbenchmarks (built only with CUDA; they sit next to
// this binary in build/calib/gpu/) and writes one measurements JSON plus one stdout table per
// benchmark into --out. Without the CUDA build, or without a GPU, it says so in one line and
// exits 2. autoddl itself never links CUDA: it probes with the `gpu_info` program.
// With --launcher "srun ..." / "mpirun ...", every run goes through that command (one process
// per GPU on every node; calib/src/calibrate_plan.cpp lists the group shapes), so autoddl can
// run on a login node; the programs must be at the same path on the nodes.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "autoddl/calib/calibrate_plan.hpp"
#include "autoddl/calib/measurements.hpp"
#include "autoddl/calib/nccl_tests_plan.hpp"
#include "autoddl/costmodel/calibration_coverage.hpp"
#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/bytes_text.hpp"
#include "cli_util.hpp"
#include "commands.hpp"

extern char** environ;

namespace autoddl::cli {

namespace {

namespace fs = std::filesystem;

struct CalibrateArgs {
  std::string out = "calib-out";
  std::string bin_dir;
  bool quick = false;
  std::vector<std::string> only;
  std::string launcher;
  int nodes = 0;
  int gpus_per_node = 0;
  // --plan-for: print the nccl-tests runs that measure this scheme's collectives, run nothing.
  std::string plan_for, model, knobs, cluster, mesh;
};

// 'text' for /bin/sh, quoted unless it is plain.
std::string shell_word(const std::string& text) {
  if (!text.empty() && text.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+") ==
                           std::string::npos) {
    return text;
  }
  std::string q = "'";
  for (char c : text) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

fs::path default_bin_dir() {
  if (const char* env = std::getenv("AUTODDL_CALIB_BIN_DIR")) return env;
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path("build/calib/gpu") : self.parent_path() / "calib" / "gpu";
}

std::string first_line(const fs::path& file) {
  std::FILE* f = std::fopen(file.c_str(), "r");
  if (!f) return "";
  char buf[512] = {0};
  if (!std::fgets(buf, sizeof buf, f)) buf[0] = 0;
  std::fclose(f);
  std::string s(buf);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

int run_plan(const std::vector<calib::PlannedRun>& plan, const fs::path& bin, const fs::path& out,
             const std::string& launcher);
void print_next(const fs::path& out);

// NCCL's debug log of an NCCL program, one file per process (NCCL_DEBUG_FILE's %h host, %p pid;
// the program sets NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING unless the user set NCCL_DEBUG).
constexpr const char* kNcclLogPattern = ".nccl.%h.%p.log";

std::vector<fs::path> nccl_logs(const fs::path& out, const std::string& stem) {
  std::vector<fs::path> logs;
  const std::string prefix = stem + ".nccl.";
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(out, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && name.size() > prefix.size() + 4 && name.substr(name.size() - 4) == ".log") {
      logs.push_back(e.path());
    }
  }
  std::sort(logs.begin(), logs.end());
  return logs;
}

void remove_nccl_logs(const fs::path& out, const std::string& stem) {
  std::error_code ec;
  for (const fs::path& p : nccl_logs(out, stem)) fs::remove(p, ec);
}

// Attaches NCCL's logged algorithm/protocol to <stem>.json, from the per-process logs and the
// run's stdout (where NCCL writes when the user set NCCL_DEBUG without NCCL_DEBUG_FILE); the
// text for the run's "ok (...)" line.
std::string attach_nccl_logs(const fs::path& out, const std::string& stem) {
  std::vector<std::string> files;
  for (const fs::path& p : nccl_logs(out, stem)) files.push_back(p.string());
  files.push_back((out / (stem + ".txt")).string());
  try {
    const int rows = calib::attach_nccl_log_files((out / (stem + ".json")).string(), files);
    if (rows == 0 && stem.ends_with("_g1")) {
      return ", one rank: NCCL runs no algorithm, none to record";
    }
    if (rows == 0) return ", no NCCL tuning lines: algorithm/protocol not recorded";
    return ", NCCL algorithm/protocol for " + std::to_string(rows) + " rows";
  } catch (const InputError& e) {
    return ", NCCL log not attached: " + safe_text(e.what());
  }
}

int run_calibrate(const CalibrateArgs& a) {
  fs::path bin = a.bin_dir.empty() ? default_bin_dir() : fs::path(a.bin_dir);
  if (!fs::exists(bin / "gpu_info")) {
    std::cerr << "autoddl: error: calibrate: the GPU microbenchmarks are not built (no " << (bin / "gpu_info").string()
              << "); configure with -DAUTODDL_WITH_CUDA=ON on a machine with the CUDA toolkit\n";
    return 2;
  }
  // Probe into a scratch folder so that a machine without a GPU is left untouched.
  fs::path scratch = fs::temp_directory_path() / ("autoddl-gpu-info-" + std::to_string(::getpid()));
  std::error_code ec;
  fs::create_directories(scratch, ec);
  int probe = run_logged({(bin / "gpu_info").string(), "--json", (scratch / "gpu_info.json").string()},
                          scratch / "gpu_info.txt");
  std::string summary = first_line(scratch / "gpu_info.txt");
  if (probe != 0) {
    fs::remove_all(scratch, ec);
    std::cerr << "autoddl: error: calibrate: no GPU: " << (summary.empty() ? "gpu_info failed" : summary) << "\n";
    return 2;
  }
  fs::create_directories(a.out, ec);
  if (ec) throw InputError(a.out, "", "cannot create the output folder: " + ec.message());
  fs::path out(a.out);
  for (const char* f : {"gpu_info.json", "gpu_info.txt"}) {
    fs::copy_file(scratch / f, out / f, fs::copy_options::overwrite_existing, ec);
  }
  fs::remove_all(scratch, ec);
  std::cout << summary << "\n";

  // GPUs on this node (gpu_info's device list), for the NCCL group-size sweep.
  int gpus = 1;
  try {
    const nlohmann::json info = read_json_file((out / "gpu_info.json").string());
    if (info.contains("devices") && info["devices"].is_array()) gpus = std::max<int>(1, static_cast<int>(info["devices"].size()));
  } catch (const InputError&) {
    // an unreadable device list: run the NCCL programs at world size 1
  }
  const int failures = run_plan(calib::calibration_plan(gpus, a.quick, a.only), bin, out, "");
  print_next(out);
  return failures ? 1 : 0;
}

// Runs each planned program (through `launcher` when not empty) with --json OUT/<stem>.json,
// its output in OUT/<stem>.txt; prints one line per run; returns the failed runs.
int run_plan(const std::vector<calib::PlannedRun>& plan, const fs::path& bin, const fs::path& out,
             const std::string& launcher) {
  int failures = 0;
  for (const calib::PlannedRun& r : plan) {
    fs::path exe = bin / r.program;
    if (launcher.empty() && !fs::exists(exe)) {
      std::cout << r.stem << ": not built, skipped\n";
      continue;
    }
    std::vector<std::string> argv = {exe.string()};
    argv.insert(argv.end(), r.args.begin(), r.args.end());
    argv.insert(argv.end(), {"--json", (out / (r.stem + ".json")).string()});
    const bool nccl = r.program.rfind("nccl_", 0) == 0;
    if (nccl) {
      remove_nccl_logs(out, r.stem);  // a previous run's logs in the same folder
      argv.insert(argv.end(), {"--nccl-log", (out / (r.stem + kNcclLogPattern)).string()});
    }
    if (!launcher.empty()) {
      std::string line = launcher;
      for (const std::string& w : argv) line += " " + shell_word(w);
      argv = {"/bin/sh", "-c", line};
    }
    std::cout << r.stem << ": " << r.what << " ... " << std::flush;
    auto t0 = std::chrono::steady_clock::now();
    int rc = run_logged(argv, out / (r.stem + ".txt"));
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (rc == 0) {
      std::printf("ok (%.1f s%s)\n", s, nccl ? attach_nccl_logs(out, r.stem).c_str() : "");
    } else {
      ++failures;
      std::printf("failed (exit %d), see %s\n", rc, (out / (r.stem + ".txt")).c_str());
    }
    std::fflush(stdout);
  }
  return failures;
}

// The preset whose GPU gpu_info named (its datasheet peaks for `fit --cluster`), or "".
std::string preset_for_gpu(const fs::path& out) {
  try {
    const nlohmann::json info = read_json_file((out / "gpu_info.json").string());
    const std::string name = info.at("devices").at(0).at("name").get<std::string>();
    for (auto [part, preset] : {std::pair{"H200", "dgx-h200"}, {"H100", "dgx-h100"}, {"A100", "dgx-a100"},
                                {"V100", "dgx1-v100"}, {"P100", "piz-daint"}, {"T4", "autosync-b"}}) {
      if (name.find(part) != std::string::npos) return preset;
    }
  } catch (const std::exception&) {
    // no or an unreadable device list: no preset to suggest
  }
  return "";
}

void print_next(const fs::path& out) {
  const std::string preset = preset_for_gpu(out);
  std::cout << "next: autoddl fit --measurements " << (out / "*.json").string()
            << (preset.empty() ? " --peak bf16=<FLOP/s>,fp16=<FLOP/s>,fp32=<FLOP/s>" : " --cluster " + preset)
            << " --out " << (out / "calibration.json").string() << "\n";
  if (!preset.empty()) {
    std::cout << "      (" << preset << ": the GPU's datasheet peaks and the cluster's NCCL model; "
              << "the SXM part's, use --peak for a PCIe card)\n";
  }
}

// --launcher: gpu_info through the launcher first (no GPU: exit 2), then the plan of the world.
int run_calibrate_launcher(const CalibrateArgs& a) {
  calib::WorldShape w;
  if (a.nodes > 0 && a.gpus_per_node > 0) {
    w = {a.nodes, a.gpus_per_node};
  } else {
    std::string why_not;
    std::optional<calib::WorldShape> parsed = calib::parse_launcher(a.launcher, why_not);
    if (!parsed) {
      throw InputError("--launcher", a.launcher,
                       "cannot tell the nodes and GPUs per node: " + why_not + " (or give --nodes and --gpus-per-node)");
    }
    w = *parsed;
    if (a.nodes > 0) w.nodes = a.nodes;
    if (a.gpus_per_node > 0) w.gpus_per_node = a.gpus_per_node;
  }
  fs::path bin = a.bin_dir.empty() ? default_bin_dir() : fs::path(a.bin_dir);
  fs::path out(a.out);
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) throw InputError(a.out, "", "cannot create the output folder: " + ec.message());
  std::vector<calib::PlannedRun> plan = calib::launcher_plan(w, a.quick, a.only);
  std::printf("calibrate: %d nodes x %d GPUs through '%s', %zu runs\n", w.nodes, w.gpus_per_node,
              safe_text(a.launcher).c_str(), plan.size());
  if (!fs::exists(bin / "gpu_info")) {
    std::printf("note: %s has no gpu_info here; the launcher must find the programs at that path on the nodes\n",
                safe_text(bin.string()).c_str());
  }
  std::fflush(stdout);
  if (run_plan({plan.front()}, bin, out, a.launcher) != 0) {
    std::cerr << "autoddl: error: calibrate: no GPU: " << safe_text(first_line(out / "gpu_info.txt")) << "\n";
    return 2;
  }
  plan.erase(plan.begin());
  const int failures = run_plan(plan, bin, out, a.launcher);
  print_next(out);
  return failures ? 1 : 0;
}

// --plan-for: the scheme's collectives (costmodel::collectives_needed) as nccl-tests commands;
// on a cluster whose calibration already measured some, only the others.
int run_plan_for(const CalibrateArgs& a) {
  if (a.model.empty() || a.cluster.empty())
    throw InputError("--plan-for", a.plan_for, "needs --model and --cluster (the plan's model and cluster)");
  if (!a.launcher.empty() || a.quick || !a.only.empty() || a.gpus_per_node > 0)
    throw InputError("--plan-for", a.plan_for,
                     "prints nccl-tests commands and runs nothing: --launcher, --quick, --only and --gpus-per-node "
                     "do not apply");
  costmodel::ClusterSpec c =
      costmodel::resolve_cluster(a.cluster, a.nodes > 0 ? std::optional<int>(a.nodes) : std::nullopt);
  costmodel::SchemedModel m = load_schemed_model(a.model, a.knobs, a.plan_for, c, a.mesh);
  costmodel::IterationPlan plan;
  costmodel::evaluate(m.graph, c, m.scheme, &plan);
  std::vector<costmodel::CollectiveNeed> needs = costmodel::collectives_needed(plan);
  const size_t all = needs.size();
  std::erase_if(needs, [](const costmodel::CollectiveNeed& n) { return n.source == costmodel::CoverageSource::measured; });
  std::printf("# nccl-tests runs that measure the collectives of %s on %s (mesh %s)%s\n", m.scheme.name.c_str(),
              c.name.c_str(), plan.mesh.shape_string().c_str(),
              !c.calibration        ? ""
              : all == needs.size() ? (" (" + c.calibration_file + " measured none of them)").c_str()
                                    : (", less the " + std::to_string(all - needs.size()) + " of " + std::to_string(all) +
                                       " that " + c.calibration_file + " measured")
                                          .c_str());
  std::printf("# one process per GPU (-g 1), nccl-tests built with MPI=1; NCCL_TESTS_SPLIT makes the groups the plan\n"
              "# runs at once (they share the nodes' NICs). Then: autoddl fit --nccl-tests LOGS --cluster %s --out "
              "calibration.json\n",
              a.cluster.c_str());
  int printed = 0;
  for (const costmodel::CollectiveNeed& n : needs) {
    if (!n.calibration_applies) {
      std::printf("\n# %s over mesh dim %d (pipeline stage sends, %s - %s): not calibrated, priced on the "
                  "cluster's link tier\n",
                  std::string(costmodel::collective_info(n.kind).name).c_str(), n.mesh_dim,
                  costmodel::bytes_text(n.min_bytes).c_str(), costmodel::bytes_text(n.max_bytes).c_str());
    }
  }
  for (const calib::NcclTestsCommand& cmd : calib::nccl_tests_commands(needs, c.gpus_per_node)) {
    std::printf("\n# %s\n", cmd.what.c_str());
    if (!cmd.note.empty()) std::printf("# note: %s\n", cmd.note.c_str());
    std::printf("%s\n", cmd.command.c_str());
    ++printed;
  }
  if (printed == 0) std::printf("\n# nothing to run: every collective of the plan was measured\n");
  return 0;
}

}  // namespace

RunFn setup_calibrate(CLI::App& sub) {
  auto a = std::make_shared<CalibrateArgs>();
  sub.add_option("--out", a->out, "folder for the measurement files")->capture_default_str();
  sub.add_option("--bin-dir", a->bin_dir,
                 "where the GPU microbenchmarks are (default: calib/gpu next to autoddl, or "
                 "$AUTODDL_CALIB_BIN_DIR)");
  sub.add_flag("--quick", a->quick, "smaller sweeps (up to 64 MiB, fewer GEMM shapes): minutes, not tens");
  sub.add_option("--only", a->only, "run only these programs (e.g. gemm_cublaslt nccl_all_reduce)");
  sub.add_option("--launcher", a->launcher,
                 "run every program through this command, one process per GPU on every node, e.g. "
                 "\"srun -N4 --ntasks-per-node=8 --gpus-per-task=1\" or \"mpirun -np 32 -N 8\"");
  sub.add_option("--nodes", a->nodes, "nodes the launcher starts (default: read from --launcher); with --plan-for, the cluster's nodes")
      ->check(integer_at_least(1));
  sub.add_option("--gpus-per-node", a->gpus_per_node, "processes (GPUs) per node (default: read from --launcher)")
      ->check(integer_at_least(1));
  sub.add_option("--plan-for", a->plan_for,
                 "print the nccl-tests commands that measure the collectives this scheme runs (with --model, "
                 "--cluster; --nodes and --mesh as in `cost`), and run nothing");
  sub.add_option("--model", a->model, "the model of --plan-for (zoo name or graph JSON)");
  sub.add_option("--set", a->knobs, "model knobs of --model");
  sub.add_option("--cluster", a->cluster, "the cluster of --plan-for (preset or file; with a calibration, only "
                                          "what it did not measure is listed)");
  sub.add_option("--mesh", a->mesh, "device mesh of the --plan-for scheme (default: the scheme's)");
  return [a] {
    if (!a->plan_for.empty()) return run_plan_for(*a);
    if (!a->model.empty() || !a->knobs.empty() || !a->cluster.empty() || !a->mesh.empty())
      throw InputError(!a->model.empty() ? "--model" : !a->knobs.empty() ? "--set" : !a->cluster.empty() ? "--cluster" : "--mesh",
                       "", "describes the plan of --plan-for; give --plan-for too");
    return a->launcher.empty() ? run_calibrate(*a) : run_calibrate_launcher(*a);
  };
}

}  // namespace autoddl::cli
