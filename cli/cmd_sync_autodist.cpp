// `autoddl sync export --autodist` and `autoddl sync dataset import --autodist` (issue 32 item 5,
// "take it away"): a strategy out as AutoDist's Strategy message (text, JSON or binary form), and
// AutoDist-format measured runs in as dataset records for `sync train|eval`. Glue only: the
// formats are sync/autodist_proto.hpp, the mapping sync/autodist.hpp, the import
// sync/autodist_records.hpp (docs/autodist-format.md).
#include <cstdio>
#include <memory>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/output_files.hpp"
#include "autoddl/costmodel/zoo.hpp"
#include "autoddl/sync/autodist.hpp"
#include "autoddl/sync/autodist_proto.hpp"
#include "autoddl/sync/autodist_records.hpp"
#include "autoddl/sync/builders.hpp"
#include "autoddl/sync/strategy_compact.hpp"
#include "autoddl/sync/strategy_json.hpp"
#include "cli_util.hpp"
#include "cmd_sync_learn.hpp"

namespace autoddl::cli {
namespace {

struct AutodistOptions {
  std::string model, knobs, cluster, strategy, builder, format = "text", out, resource_spec, resource_spec_out,
      autodist_dir;
  std::optional<int> nodes, run;
  bool autodist = false;
};

int run_export(const AutodistOptions& o) {
  if (!o.autodist) throw InputError("--autodist", "", "is required (AutoDist's strategy is the one export format)");
  if (o.strategy.empty() == o.builder.empty())
    throw InputError("--strategy", "", "give exactly one of --strategy FILE and --builder NAME");
  const sync::AutodistFormat format = sync::parse_autodist_format(o.format, "--format");
  if (format == sync::AutodistFormat::binary && o.out.empty())
    throw InputError("--format", "", "binary goes to a file: give --out FILE");
  const costmodel::ClusterSpec c = costmodel::resolve_cluster(o.cluster, o.nodes);
  const costmodel::Graph g = load_sync_model(o.model, o.knobs, c).graph;
  const std::vector<sync::Variable> vars = sync::extract_variables(g);
  sync::Strategy s;
  if (!o.strategy.empty()) {
    const nlohmann::json j = read_json_file(o.strategy);
    if (sync::is_search_report(j)) {
      s = sync::strategy_from_search_report(j, o.run.value_or(-1), o.strategy);
    } else {
      if (o.run) throw InputError("--run", "", "needs --strategy to be a `sync search --json` report");
      s = guard_json(o.strategy, [&] { return sync::strategy_from_json(j, o.strategy); });
    }
    sync::validate_strategy(s, vars, c, o.strategy);
  } else {
    if (o.run) throw InputError("--run", "", "needs --strategy to be a `sync search --json` report");
    s = sync::find_builder(o.builder).build(vars, c);
    sync::validate_strategy(s, vars, c, o.builder);
  }
  const std::vector<std::string> hosts =
      o.resource_spec.empty() ? sync::default_autodist_hosts(c.nodes)
                              : sync::resource_spec_hosts(sync::load_resource_spec(o.resource_spec), c, o.resource_spec);
  const nlohmann::json tree = sync::strategy_to_autodist(s, vars, c, hosts, print_note);
  const std::string text = sync::write_autodist_strategy(tree, format);
  OutputFiles files;
  files.add(o.out, text);
  if (!o.resource_spec_out.empty()) files.add(o.resource_spec_out, sync::resource_spec_yaml(c, hosts));
  files.commit();
  if (o.out.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else {
    std::printf("AutoDist strategy '%s' (%s form, %zu variables, hosts %s) written to %s\n",
                tree.value("id", "").c_str(), sync::autodist_format_name(format), s.vars.size(),
                o.resource_spec.empty() ? ("node0..node" + std::to_string(c.nodes - 1)).c_str() : o.resource_spec.c_str(),
                o.out.c_str());
  }
  if (!o.resource_spec_out.empty()) std::printf("resource spec written to %s\n", o.resource_spec_out.c_str());
  return 0;
}

int run_import(const AutodistOptions& o) {
  if (o.autodist_dir.empty()) throw InputError("--autodist", "", "is required (the AutoDist record directory)");
  if (o.out.empty()) throw InputError("--out", "", "is required");
  const costmodel::ClusterSpec c = costmodel::resolve_cluster(o.cluster);
  const SyncModel m = load_sync_model(o.model, o.knobs, c);
  const costmodel::Graph& g = m.graph;
  sync::AutodistImport im;
  im.pair = {o.model, costmodel::parse_knob_list(o.knobs), o.cluster};
  im.knobs = m.knobs;
  im.resource_spec = o.resource_spec;
  im.note = print_note;
  const int64_t n = sync::import_autodist_dataset(o.autodist_dir, g, c, im, o.out);
  std::printf("autoddl sync dataset import: %lld AutoDist runs from %s as %s records in %s/records.jsonl\n",
              static_cast<long long>(n), o.autodist_dir.c_str(), im.pair.key().c_str(), o.out.c_str());
  return 0;
}

}  // namespace

std::function<std::optional<int>()> setup_sync_autodist(CLI::App& sync, CLI::App& dataset) {
  auto opt = std::make_shared<AutodistOptions>();
  CLI::App* exp = sync.add_subcommand(
      "export", "Write a strategy (a file or a builder's) as AutoDist's Strategy message (text, JSON or binary)");
  add_model_options(*exp, opt->model, opt->knobs);
  add_cluster_options(*exp, opt->cluster, opt->nodes);
  exp->add_option("--strategy", opt->strategy,
                  "A strategy JSON file (docs/sync-strategy-json.md) or a `sync search --json` report");
  exp->add_option("--run", opt->run, "With a search report: run N's strategy (default: the best)")
      ->check(integer_at_least(0));
  exp->add_option("--builder", opt->builder, "A builder name (autoddl sync build --help lists them)");
  exp->add_flag("--autodist", opt->autodist, "AutoDist's strategy.proto (required: the one format)");
  exp->add_option("--format", opt->format, "text (protobuf text format), json (canonical JSON) or binary "
                                           "(what AutoDist's Strategy.deserialize reads)")
      ->capture_default_str();
  exp->add_option("--out", opt->out, "Write to FILE (default: stdout; binary needs a file)");
  exp->add_option("--resource-spec", opt->resource_spec,
                  "AutoDist resource_spec.yml whose node addresses name the hosts (default node0, node1, ...)");
  exp->add_option("--resource-spec-out", opt->resource_spec_out,
                  "Also write the cluster as an AutoDist resource_spec.yml under those hosts");

  CLI::App* imp = dataset.add_subcommand(
      "import", "Read AutoDist-format runs (strategies/, runtime/, resource_spec/) as dataset records");
  imp->add_option("--autodist", opt->autodist_dir,
                  "Directory of AutoDist runs: strategies/<ID>, runtime/<ID>.yml, resource_spec/<ID>")
      ->required();
  add_model_options(*imp, opt->model, opt->knobs);
  imp->add_option("--cluster", opt->cluster, "The cluster the runs were measured on (preset or JSON)")->required();
  imp->add_option("--resource-spec", opt->resource_spec,
                  "resource_spec.yml for the runs without resource_spec/<ID> (default hosts node0, node1, ...)");
  imp->add_option("--out", opt->out, "Output dataset directory (records.jsonl, schema.json; must be new)")->required();
  return [opt, exp, imp]() -> std::optional<int> {
    if (exp->parsed()) return run_export(*opt);
    if (imp->parsed()) return run_import(*opt);
    return std::nullopt;
  };
}

}  // namespace autoddl::cli
