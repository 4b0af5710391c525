// autoddl's entry point: builds the CLI from the command table, runs the chosen subcommand,
// and turns an InputError into one line `autoddl: error: <file>: <field>: <reason>` + exit 2.
#include <iostream>
#include <map>

#include "autoddl/costmodel/error.hpp"
#include "commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "autoddl: find fast parallelization and synchronization schemes for training a model on a "
      "GPU cluster, and show how sure we are (analytical model, SimGrid, real GPUs).",
      "autoddl"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Help for every subcommand");
  std::map<CLI::App*, autoddl::cli::RunFn> runs;
  for (const auto& cmd : autoddl::cli::commands()) {
    CLI::App* sub = app.add_subcommand(std::string(cmd.name), std::string(cmd.help));
    runs[sub] = cmd.setup(*sub);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "autoddl: error: " << e.what() << " (see --help)\n";
    return 2;
  } catch (const autoddl::InputError& e) {  // thrown by option validators
    std::cerr << "autoddl: error: " << e.what() << "\n";
    return 2;
  }
  try {
    for (CLI::App* sub : app.get_subcommands()) return runs.at(sub)();
  } catch (const autoddl::InputError& e) {
    std::cout.flush();
    std::cerr << "autoddl: error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
