// `autoddl calibrate`: runs calib's GPU microbenchmarks (built only with CUDA; they sit next to
// this binary in build/calib/gpu/) and writes one measurements JSON plus one stdout table per
// benchmark into --out. Without the CUDA build, or without a GPU, it says so in one line and
// exits 2. autoddl itself never links CUDA: it probes with the `gpu_info` program.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "autoddl/calib/calibrate_plan.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"
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
};

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
  int failures = 0;
  for (const calib::PlannedRun& r : calib::calibration_plan(gpus, a.quick, a.only)) {
    fs::path exe = bin / r.program;
    if (!fs::exists(exe)) {
      std::cout << r.stem << ": not built, skipped\n";
      continue;
    }
    std::vector<std::string> argv = {exe.string()};
    argv.insert(argv.end(), r.args.begin(), r.args.end());
    argv.insert(argv.end(), {"--json", (out / (r.stem + ".json")).string()});
    std::cout << r.stem << ": " << r.what << " ... " << std::flush;
    auto t0 = std::chrono::steady_clock::now();
    int rc = run_logged(argv, out / (r.stem + ".txt"));
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (rc == 0) {
      std::printf("ok (%.1f s)\n", s);
    } else {
      ++failures;
      std::printf("failed (exit %d), see %s\n", rc, (out / (r.stem + ".txt")).c_str());
    }
    std::fflush(stdout);
  }
  std::cout << "next: autoddl fit --measurements " << (out / "*.json").string()
            << " --peak bf16=<FLOP/s>,fp16=<FLOP/s>,fp32=<FLOP/s> --out "
            << (out / "calibration.json").string() << "\n";
  return failures ? 1 : 0;
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
  return [a] { return run_calibrate(*a); };
}

}  // namespace autoddl::cli
