// `autoddl models [--json [FILE]]`: the model zoo with knobs, parameters (all, and those one
// token's forward pass multiplies: a Mixture-of-Experts model's routed experts count top_k of
// their experts) and forward FLOPs per sample, each built with its default knobs.
#include <cstdio>
#include <iostream>

#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/zoo.hpp"
#include "cli_util.hpp"
#include "commands.hpp"

namespace autoddl::cli {
namespace {

struct ModelsOptions {
  bool json = false;
  std::string json_file;
};

int run_models(const ModelsOptions& opt) {
  using namespace costmodel;
  nlohmann::json rows = nlohmann::json::array();
  if (!opt.json) {
    std::printf("%-15s %10s %10s %12s %7s  %s\n", "model", "params", "active", "fwd FLOPs", "ops",
                "knobs (defaults)");
    std::printf("%-15s %10s %10s %12s %7s\n", "", "", "per token", "per sample", "");
  }
  for (const ZooModel& m : zoo_models()) {
    Graph g = build_zoo_model(m.name, {});
    nlohmann::json knobs = nlohmann::json::array();
    std::string knob_text;
    for (const KnobSpec& k : m.knobs) {
      knobs.push_back({{"name", k.name}, {"default", k.default_value}, {"help", k.help}});
      knob_text += (knob_text.empty() ? "" : ",") + k.name + "=" + k.default_value;
    }
    rows.push_back({{"name", m.name},
                    {"description", m.description},
                    {"knobs", knobs},
                    {"params", g.parameter_count()},
                    {"active_params", active_parameter_count(g)},
                    {"fwd_flops_per_sample", g.forward_flops_per_sample()},
                    {"ops", g.ops.size()}});
    if (!opt.json) {
      std::printf("%-15s %10s %10s %12s %7zu  %s\n", std::string(m.name).c_str(),
                  human_count(static_cast<double>(g.parameter_count())).c_str(),
                  human_count(active_parameter_count(g)).c_str(),
                  human_count(g.forward_flops_per_sample()).c_str(), g.ops.size(),
                  knob_text.c_str());
    }
  }
  if (opt.json) emit_json(rows, opt.json_file);
  return 0;
}

}  // namespace

RunFn setup_models(CLI::App& sub) {
  auto opt = std::make_shared<ModelsOptions>();
  sub.add_option("--json", opt->json_file,
                 "Write the list as JSON to FILE (to stdout when FILE is omitted)")
      ->expected(0, 1);
  sub.footer("Build a model with other knobs in any command with --model M --set k=v,...");
  return [opt, &sub] {
    opt->json = sub.count("--json") > 0;
    return run_models(*opt);
  };
}

}  // namespace autoddl::cli
