// The one list of subcommands: adding a command = one cmd_<name>.cpp plus one row here.
#include "commands.hpp"

namespace autoddl::cli {

RunFn setup_models(CLI::App& sub);
RunFn setup_clusters(CLI::App& sub);
RunFn setup_comm(CLI::App& sub);
RunFn setup_cost(CLI::App& sub);
RunFn setup_export(CLI::App& sub);
RunFn setup_fit(CLI::App& sub);
RunFn setup_calibrate(CLI::App& sub);
RunFn setup_validate(CLI::App& sub);
#ifdef AUTODDL_HAVE_SEARCH
RunFn setup_search(CLI::App& sub);
#endif
#ifdef AUTODDL_HAVE_SYNC
RunFn setup_sync(CLI::App& sub);
#endif
#ifdef AUTODDL_HAVE_SIM
RunFn setup_simulate(CLI::App& sub);
#endif
#ifdef AUTODDL_HAVE_EXPERIMENTS
RunFn setup_sweep(CLI::App& sub);
#endif

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"models", "List the model zoo: knobs with defaults, parameters, forward model FLOPs per sample (Megatron-LM's count)",
       setup_models},
      {"clusters", "List the built-in cluster presets with their key figures", setup_clusters},
      {"comm", "Collective times in nccl-tests' table shape (NCCL's tuning model or α-β)", setup_comm},
      {"cost", "Analytical cost of one scheme: iteration time, communication, memory, per op", setup_cost},
      {"export", "The framework arguments that run a scheme (Megatron-LM), or why no framework flag expresses it",
       setup_export},
#ifdef AUTODDL_HAVE_SEARCH
      {"search", "Search a fast scheme (coordinate descent, ILP, DP) and rank it against the baselines",
       setup_search},
#endif
#ifdef AUTODDL_HAVE_SIM
      {"simulate", "Simulate one iteration of a scheme with SimGrid and compare it with the analytical cost",
       setup_simulate},
#endif
#ifdef AUTODDL_HAVE_SYNC
      {"sync", "Data-parallel sync strategies (AutoSync): build the hand-made ones, evaluate any, learn to rank them", setup_sync},
#endif
      {"fit", "Fit a calibration (α-β per collective and group, GEMM efficiency, HBM) from "
              "nccl-tests logs and microbenchmark results",
       setup_fit},
      {"calibrate", "Run the CUDA/NCCL microbenchmarks on this machine's GPUs (needs the CUDA build)",
       setup_calibrate},
      {"validate", "Run a scheme's per-rank program on GPUs (or compare a runner result) against the "
                   "cost model's prediction",
       setup_validate},
#ifdef AUTODDL_HAVE_EXPERIMENTS
      {"sweep", "Parameter sweeps from an experiment config: run (parallel, resumable, sharded), merge, status",
       setup_sweep},
#endif
  };
  return table;
}

}  // namespace autoddl::cli
