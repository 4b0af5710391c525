// The one list of subcommands: adding a command = one cmd_<name>.cpp plus one row here.
#include "commands.hpp"

namespace autoddl::cli {

RunFn setup_models(CLI::App& sub);
RunFn setup_clusters(CLI::App& sub);
RunFn setup_comm(CLI::App& sub);
RunFn setup_cost(CLI::App& sub);
#ifdef AUTODDL_HAVE_SEARCH
RunFn setup_search(CLI::App& sub);
#endif

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"models", "List the model zoo: knobs with defaults, parameters, forward FLOPs per sample",
       setup_models},
      {"clusters", "List the built-in cluster presets with their key figures", setup_clusters},
      {"comm", "Collective times in nccl-tests' table shape (α-β model)", setup_comm},
      {"cost", "Analytical cost of one scheme: iteration time, communication, memory, per op", setup_cost},
#ifdef AUTODDL_HAVE_SEARCH
      {"search", "Search a fast scheme (coordinate descent, ILP, DP) and rank it against the baselines",
       setup_search},
#endif
  };
  return table;
}

}  // namespace autoddl::cli
