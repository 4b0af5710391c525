// autoddl's entry point: builds the CLI from the command table, runs the chosen subcommand,
// and turns an InputError into one line `autoddl: error: <file>: <field>: <reason>` + exit 2.
// Anything else that escapes (out of memory, a library's exception) is one line and exit 2 too.
#include <iostream>
#include <map>
#include <new>
#include <string>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"
#include "cli_util.hpp"
#include "commands.hpp"
#ifdef AUTODDL_HAVE_EXPERIMENTS
#include "autoddl/experiments/version.hpp"
#endif

int main(int argc, char** argv) {
  autoddl::install_temp_cleanup();
  CLI::App app{
      "autoddl: find fast parallelization and synchronization schemes for training a model on a "
      "GPU cluster, and show how sure we are (analytical model, SimGrid, real GPUs).",
      "autoddl"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Help for every subcommand");
#ifdef AUTODDL_HAVE_EXPERIMENTS
  // The commit is for the record; the model version is what sweep rows are compared by.
  app.set_version_flag("--version",
                       std::string("autoddl ") + autoddl::experiments::autoddl_version() + "\nmodel version " +
                           autoddl::experiments::model_version() + " (SHA-256 of the " +
                           std::to_string(autoddl::experiments::model_version_files()) +
                           " model source files cmake/model_sources.txt names)",
                       "Print the version (commit) and the model version sweep rows record, and exit");
#endif
  std::map<CLI::App*, autoddl::cli::RunFn> runs;
  for (const auto& cmd : autoddl::cli::commands()) {
    CLI::App* sub = app.add_subcommand(std::string(cmd.name), std::string(cmd.help));
    runs[sub] = cmd.setup(*sub);
  }
  autoddl::cli::check_int_options(app);
  bool known = argc < 2 || argv[1][0] == '-';
  for (const auto& [sub, run] : runs) known = known || sub->check_name(argv[1]);
  if (!known) {
    std::string names;
    for (const auto& cmd : autoddl::cli::commands()) names += (names.empty() ? "" : ", ") + std::string(cmd.name);
    std::cerr << "autoddl: error: unknown command '" << autoddl::safe_text(argv[1], 100) << "' (commands: " << names
              << ")\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "autoddl: error: " << autoddl::safe_text(e.what(), 2000) << " (see --help)\n";
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
  } catch (const std::bad_alloc&) {
    std::cout.flush();
    std::cerr << "autoddl: error: out of memory (the request is too large)\n";
    return 2;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "autoddl: error: " << autoddl::safe_text(e.what(), 2000) << "\n";
    return 2;
  }
  return 0;
}
