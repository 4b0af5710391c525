// `autoddl sweep run|merge|status|plot`: parameter sweeps from an experiment config (experiments/).
// run expands the matrix and runs this shard's cells in worker processes that call this very
// binary's cost/search/simulate; merge combines shard folders; status shows what is done; plot
// draws a folder's results with the figure scripts (sweep_plot.cpp).
#ifdef AUTODDL_HAVE_EXPERIMENTS
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <map>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/experiments/config.hpp"
#include "autoddl/experiments/merge.hpp"
#include "autoddl/experiments/runner.hpp"
#include "autoddl/experiments/version.hpp"
#include "commands.hpp"
#include "sweep_plot.hpp"

namespace autoddl::cli {
namespace {

struct SweepCliOptions {
  std::string config, out, shard = "0/1";
  int jobs = 1;
  bool retry_failed = false, allow_large = false, reuse = false;
  std::vector<std::string> merge_dirs;
  std::string merge_out, status_dir;
  int list = 20;
  SweepPlotOptions plot;
};

// Workers exec /proc/self/exe itself rather than the path it names: the same binary even when
// a rebuild replaces build/autoddl while a sweep runs.
std::string self_exe() {
  char buf[PATH_MAX];
  if (readlink("/proc/self/exe", buf, sizeof buf - 1) <= 0) {
    throw InputError("sweep", "", "cannot find the autoddl binary (/proc/self/exe)");
  }
  return "/proc/self/exe";
}

int run_cmd(const SweepCliOptions& o) {
  using namespace experiments;
  RunOptions ro;
  parse_shard(o.shard, ro.shard_index, ro.shard_count);
  const SweepConfig config = load_sweep_config(o.config, o.allow_large);  // every field checked before any cell
  ro.binary = self_exe();
  ro.out_dir = o.out;
  ro.jobs = o.jobs;
  ro.retry_failed = o.retry_failed;
  ro.reuse = o.reuse;
  const RunSummary s = run_sweep(config, ro);
  std::printf("sweep %s: %d cells, %d done before, %d run (%d ok, %d failed) in %.2f s; results in %s\n",
              config.name.c_str(), s.cells, s.already, s.ran, s.ok, s.failed, s.wall_s, s.results_file.c_str());
  if (s.reused_count() > 0) {
    std::map<std::string, int> counts;
    for (const auto& [v, keys] : s.reused) counts[v] = static_cast<int>(keys.size());
    std::printf("reused %d cell%s of another model version (%s; this autoddl: %s); their keys are in %s\n",
                s.reused_count(), s.reused_count() == 1 ? "" : "s", version_counts_text(counts).c_str(),
                model_version(), s.summary_file.c_str());
  }
  return 0;
}

void print_cells(const char* title, const std::vector<nlohmann::json>& cells, int limit, bool with_error) {
  if (cells.empty()) return;
  std::printf("%s (%zu):\n", title, cells.size());
  for (size_t i = 0; i < cells.size(); ++i) {
    if (static_cast<int>(i) == limit) {
      std::printf("  ... %zu more\n", cells.size() - i);
      break;
    }
    const auto& c = cells[i];
    const auto error = c.find("error");
    const std::string why = error != c.end() && error->is_string() ? error->get<std::string>() : "?";
    std::printf("  %s  %s%s%s\n", c["key"].get<std::string>().c_str(),
                experiments::describe(c.contains("inputs") ? c["inputs"] : nlohmann::json()).c_str(),
                with_error ? ": " : "", with_error ? why.c_str() : "");
  }
}

int merge_cmd(const SweepCliOptions& o) {
  const auto s = experiments::merge_sweeps(o.merge_dirs, o.merge_out);
  std::printf("merged %zu folder%s: %d cells, %d ok, %d failed, %zu missing -> %s\n", o.merge_dirs.size(),
              o.merge_dirs.size() == 1 ? "" : "s", s.cells, s.ok, s.failed, s.missing.size(), s.results_file.c_str());
  if (s.dropped) std::printf("dropped %d rows of cells that are not in the sweep (an older config)\n", s.dropped);
  print_cells("missing cells", s.missing, o.list, false);
  return 0;
}

int status_cmd(const SweepCliOptions& o) {
  const auto s = experiments::sweep_status(o.status_dir);
  std::printf("sweep %s in %s: %d cells, %d ok, %d failed, %zu missing\n", s.name.c_str(), o.status_dir.c_str(),
              s.cells, s.ok, s.failed, s.missing.size());
  for (const auto& [f, n] : s.files) std::printf("  %s: %d rows\n", f.c_str(), n);
  if (s.torn) std::printf("  %d torn last line(s) skipped (an interrupted write; those cells run again)\n", s.torn);
  if (s.stale) std::printf("  %d cells recorded that are not in sweep.json (an older config)\n", s.stale);
  // Model versions of the standing rows: another version's are stale (`sweep run` recomputes them).
  if (s.versions.size() > 1 || (s.versions.size() == 1 && s.versions.begin()->first != experiments::model_version())) {
    for (const auto& [v, n] : s.versions) {
      const bool mine = v == experiments::model_version();
      std::printf("  model version %s: %d cells%s\n", v.empty() ? "(unrecorded)" : v.c_str(), n,
                  mine ? " (this autoddl)" : " (stale: `sweep run` recomputes them unless --reuse)");
    }
  }
  print_cells("failed cells", s.failed_rows, o.list, true);
  print_cells("missing cells", s.missing, o.list, false);
  return 0;
}

}  // namespace

RunFn setup_sweep(CLI::App& sub) {
  auto opt = std::make_shared<SweepCliOptions>();
  sub.require_subcommand(1);
  CLI::App* run = sub.add_subcommand("run", "Run the cells of an experiment config (resumes: done cells are skipped)");
  run->add_option("config", opt->config, "Experiment config JSON (docs/sweep-json.md)")->required();
  run->add_option("--jobs,-j", opt->jobs, "Cells run in parallel (worker processes)")->capture_default_str();
  run->add_option("--shard", opt->shard, "Run shard I of N (0 <= I < N; cells split by key), e.g. for a Slurm array")
      ->capture_default_str();
  run->add_option("--out", opt->out, "Output folder (default: the config's output)");
  run->add_flag("--retry-failed", opt->retry_failed, "Run cells again whose recorded result is a failure");
  run->add_flag("--reuse", opt->reuse,
                "Keep rows made by another model version (other cost model, search or simulator sources) "
                "instead of recomputing them; they are listed in the output and in DIR/run.json");
  run->add_flag("--allow-large", opt->allow_large,
                "Run a config of more than " + std::to_string(experiments::kMaxSweepCells) + " cells (up to " +
                    std::to_string(experiments::kMaxSweepCellsLarge) + ")");
  CLI::App* merge = sub.add_subcommand("merge", "Combine the folders of a sweep's shards into one");
  merge->add_option("dirs", opt->merge_dirs, "Sweep folders (each with sweep.json and results*.jsonl)")->required();
  merge->add_option("--out", opt->merge_out, "New folder for the merged sweep")->required();
  merge->add_option("--list", opt->list, "Missing cells listed at most")->capture_default_str();
  CLI::App* status = sub.add_subcommand("status", "What a sweep folder holds: done, failed and missing cells");
  status->add_option("dir", opt->status_dir, "Sweep folder")->required();
  status->add_option("--list", opt->list, "Failed and missing cells listed at most")->capture_default_str();
  CLI::App* plot = add_sweep_plot(sub, opt->plot);
  return [opt, run, merge, plot] {
    if (run->parsed()) return run_cmd(*opt);
    if (merge->parsed()) return merge_cmd(*opt);
    if (plot->parsed()) return run_sweep_plot(opt->plot);
    return status_cmd(*opt);
  };
}

}  // namespace autoddl::cli
#endif  // AUTODDL_HAVE_EXPERIMENTS
