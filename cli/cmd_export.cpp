// `autoddl export`: the framework settings that run a scheme (scheme_export.hpp), or one line
// saying why no framework flag expresses it.
#include <cstdio>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/cost_model.hpp"
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
  bool approximate = false;
};

// An infeasible layout is still exported (a user may have more memory than the preset), with one
// warning line on stderr so the settings on stdout stay clean.
void warn_if_infeasible(const costmodel::CostReport& r, const std::string& what) {
  if (!r.feasible)
    std::fprintf(stderr, "autoddl: warning: the cost model finds %s infeasible: %s\n", what.c_str(),
                 r.infeasible_reason.c_str());
}

int run_export(const ExportOptions& opt) {
  using namespace costmodel;
  const ExportFormat& f = find_export_format(opt.format);
  const ClusterSpec c = resolve_cluster(opt.cluster, opt.nodes);
  const SchemedModel m = load_schemed_model(opt.model, opt.knobs, opt.scheme, c, opt.mesh);
  if (!m.note.empty()) throw autoddl::InputError("--scheme", "", "costed on a changed model (" + m.note + "): not exported");
  // --approximate: the nearest layout, priced on its own next to the scheme it stands for; a
  // scheme that is a layout (or without --approximate) is exported exactly, or refused.
  std::string why_not;
  bool is_layout = false;
  const std::optional<ApproximateLayout> near =
      opt.approximate ? nearest_layout(m.graph, c, m.scheme, why_not, is_layout) : std::nullopt;
  if (!near) {
    if (opt.approximate && !is_layout)
      throw autoddl::InputError("--approximate", "", std::string(f.name) + " runs no layout near it: " + why_not);
    const std::string text = export_scheme(f, m.graph, c, m.scheme);
    warn_if_infeasible(evaluate(m.graph, c, m.scheme), "this scheme");
    std::printf("# %s\n%s", std::string(f.version).c_str(), text.c_str());
    return 0;
  }
  const CostReport want = evaluate(m.graph, c, m.scheme);
  const CostReport got = evaluate(m.graph, c, near->scheme);
  const std::string text = f.write(m.graph, near->layout);
  warn_if_infeasible(got, "the nearest layout");
  std::printf("# approximate: the scheme is %s\n", near->why_not.c_str());
  std::printf("# these settings run the nearest layout, %s: %s per iteration by the cost model, against %s for "
              "the scheme (%.2fx its time)\n",
              near->layout.spec.c_str(), human_seconds(got.iteration_s).c_str(), human_seconds(want.iteration_s).c_str(),
              got.iteration_s / want.iteration_s);
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
  sub.add_flag("--approximate", opt->approximate,
               "a scheme no framework layout expresses: export the nearest Megatron layout instead, with both "
               "predicted times (without it: one line naming the first op that differs)");
  return [opt] { return run_export(*opt); };
}

}  // namespace autoddl::cli
