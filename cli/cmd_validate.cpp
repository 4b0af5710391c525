// `autoddl validate`: lowers a scheme to each rank's program (docs/validation-plan.md), runs it
// on this machine's GPUs with calib's validate_runner when there are any, or compares a
// runner result brought back from a GPU machine (--measured): predicted vs measured per
// iteration, phase, step kind and op, with error %. Without a GPU and without --measured it
// says so in one line and exits 2 (after writing --plan-out). autoddl never links CUDA.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "autoddl/calib/validation_compare.hpp"
#include "autoddl/calib/validation_plan.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/mesh.hpp"
#include "autoddl/costmodel/output_files.hpp"
#include "cli_util.hpp"
#include "commands.hpp"

extern char** environ;

namespace autoddl::cli {

namespace {

namespace fs = std::filesystem;

struct ValidateOptions {
  std::string model, knobs, cluster, mesh, scheme, plan_out, measured, json_file, runner, measured_out;
  std::optional<int> nodes;
  int iters = 20, warmup = 5, top = 15;
};

fs::path default_runner() {
  if (const char* env = std::getenv("AUTODDL_CALIB_BIN_DIR")) return fs::path(env) / "validate_runner";
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path("build/calib/gpu/validate_runner") : self.parent_path() / "calib" / "gpu" / "validate_runner";
}

// A machine with an NVIDIA GPU and driver has these; checking them keeps the no-GPU answer
// the same whether or not the CUDA programs were built.
bool nvidia_device_present() {
  std::error_code ec;
  if (fs::exists("/dev/nvidiactl", ec)) return true;
  return fs::is_directory("/proc/driver/nvidia/gpus", ec) && !fs::is_empty("/proc/driver/nvidia/gpus", ec);
}

std::string last_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  return last;
}

// --measured: the comparison, and its files (--plan-out unless `plan_json` is null, --json)
// written all or none.
int compare_and_print(const ValidateOptions& opt, const calib::ValidationPlan& plan, const nlohmann::json* plan_json,
                      const std::string& measured) {
  const nlohmann::json mj = read_json_file(measured);
  calib::ValidationResult r = guard_json(measured, [&] { return calib::result_from_json(mj, measured); });
  calib::Comparison c = calib::compare_validation(plan, r, measured);
  OutputFiles out;
  if (plan_json) out.add_json(opt.plan_out, *plan_json, 1);
  if (!opt.json_file.empty()) out.add_json(opt.json_file, nlohmann::json(c));
  out.commit();
  std::cout << calib::format_comparison(c, opt.top);
  return 0;
}

int run_validate(const ValidateOptions& opt) {
  using namespace costmodel;
  ClusterSpec c = resolve_cluster(opt.cluster, opt.nodes);
  SchemedModel m = load_schemed_model(opt.model, opt.knobs, opt.scheme, c, opt.mesh);
  const Graph& g = m.graph;
  const Scheme& s = m.scheme;
  calib::PlanBuild b = calib::make_validation_plan(g, c, s);
  nlohmann::json plan_json = b.plan;
  if (!opt.measured.empty()) return compare_and_print(opt, b.plan, &plan_json, opt.measured);
  if (!opt.plan_out.empty()) write_json_atomic(opt.plan_out, plan_json, 1);

  const std::string plan_note = opt.plan_out.empty() ? "" : " (the plan is written)";
  if (!nvidia_device_present()) {
    std::cerr << "autoddl: error: validate: no GPU here and no --measured file" << plan_note
              << ": run the plan with validate_runner on a GPU machine, then pass its JSON with --measured "
                 "(calib/README.md)\n";
    return 2;
  }
  fs::path runner = opt.runner.empty() ? default_runner() : fs::path(opt.runner);
  if (!fs::exists(runner)) {
    std::cerr << "autoddl: error: validate: " << runner.string() << " is not built (configure with "
              << "-DAUTODDL_WITH_CUDA=ON and build calib_gpu) and no --measured file" << plan_note << "\n";
    return 2;
  }
  fs::path scratch = fs::temp_directory_path() / ("autoddl-validate-" + std::to_string(::getpid()));
  std::error_code ec;
  fs::create_directories(scratch, ec);
  if (ec) throw InputError(scratch.string(), "", "cannot create a scratch folder: " + ec.message());
  std::string plan_path = opt.plan_out;
  if (plan_path.empty()) {
    plan_path = (scratch / "plan.json").string();
    write_json_atomic(plan_path, plan_json, -1);
  }
  std::string result_path = opt.measured_out.empty() ? (scratch / "measured.json").string() : opt.measured_out;
  fs::path log = scratch / "runner.log";
  std::cout << "running " << b.plan.world_size() << " rank" << (b.plan.world_size() == 1 ? "" : "s") << " of "
            << b.plan.model << " / " << b.plan.scheme << " with " << runner.string() << " ..." << std::endl;
  int rc = run_logged({runner.string(), "--plan", plan_path, "--out", result_path, "--quiet", "-n",
                       std::to_string(opt.iters), "-w", std::to_string(opt.warmup)},
                      log);
  std::string why = last_line(log);
  int status = 0;
  if (rc == 0) {
    status = compare_and_print(opt, b.plan, nullptr, result_path);  // the plan is written already
    if (!opt.measured_out.empty()) std::cout << "measurements: " << opt.measured_out << "\n";
  } else if (rc == 2) {
    std::cerr << "autoddl: error: validate: not measured: " << why << plan_note << "\n";
    status = 2;
  } else {
    std::cerr << "autoddl: error: validate: " << runner.string() << " failed (exit " << rc << "): " << why << "\n";
    status = 1;
  }
  fs::remove_all(scratch, ec);
  return status;
}

}  // namespace

RunFn setup_validate(CLI::App& sub) {
  auto opt = std::make_shared<ValidateOptions>();
  add_model_options(sub, opt->model, opt->knobs);
  add_cluster_options(sub, opt->cluster, opt->nodes, &opt->mesh);
  add_scheme_option(sub, opt->scheme);
  sub.add_option("--plan-out", opt->plan_out, "Write the per-rank validation plan JSON to FILE");
  sub.add_option("--measured", opt->measured,
                 "Compare a validate_runner result (autoddl-validation-result/1) instead of running");
  sub.add_option("--json", opt->json_file, "Write the predicted-vs-measured comparison JSON to FILE");
  sub.add_option("--runner", opt->runner,
                 "validate_runner to use (default: calib/gpu next to autoddl, or $AUTODDL_CALIB_BIN_DIR)");
  sub.add_option("--measured-out", opt->measured_out, "Keep the runner's result JSON in FILE");
  sub.add_option("--iters", opt->iters, "Timed iterations of the runner")->capture_default_str()->check(integer_at_least(1));
  sub.add_option("--warmup", opt->warmup, "Warm-up iterations of the runner")->capture_default_str()->check(integer_at_least(0));
  sub.add_option("--top", opt->top, "Show the N ops with the most measured time (-1: all)")
      ->capture_default_str()
      ->check(integer_at_least(-1));
  return [opt] { return run_validate(*opt); };
}

}  // namespace autoddl::cli
