// `autoddl export`: the framework settings that run a scheme (scheme_export.hpp), or one line
// saying why no framework flag expresses it.
#include <cstdio>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/scheme_export.hpp"
#include "autoddl/costmodel/schemed_model.hpp"
#include "cli_util.hpp"
#include "commands.hpp"

namespace autoddl::cli {
namespace {

struct ExportOptions {
  std::string model, knobs, cluster, mesh, scheme, format;
  std::optional<int> nodes;
};

int run_export(const ExportOptions& opt) {
  using namespace costmodel;
  const ExportFormat& f = find_export_format(opt.format);
  const ClusterSpec c = resolve_cluster(opt.cluster, opt.nodes);
  const SchemedModel m = load_schemed_model(opt.model, opt.knobs, opt.scheme, c, opt.mesh);
  if (!m.note.empty()) throw autoddl::InputError("--scheme", "", "costed on a changed model (" + m.note + "): not exported");
  const std::string text = export_scheme(f, m.graph, c, m.scheme);
  std::printf("# %s\n%s", std::string(f.version).c_str(), text.c_str());
  return 0;
}

}  // namespace

RunFn setup_export(CLI::App& sub) {
  auto opt = std::make_shared<ExportOptions>();
  add_model_options(sub, opt->model, opt->knobs);
  add_cluster_options(sub, opt->cluster, opt->nodes, &opt->mesh);
  add_scheme_option(sub, opt->scheme);
  std::string formats;
  for (const costmodel::ExportFormat& f : costmodel::export_formats()) formats += (formats.empty() ? "" : " | ") + std::string(f.name);
  sub.add_option("--to", opt->format, formats)->required();
  return [opt] { return run_export(*opt); };
}

}  // namespace autoddl::cli
