// The uneven-heads policy of schemed_model.hpp: lower, and on HeadsNotDivisible rebuild the zoo
// model with heads_pad = tp and lower again.
#include "autoddl/costmodel/schemed_model.hpp"

#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/zoo.hpp"

namespace autoddl::costmodel {

namespace {
bool has_knob(const ZooModel& z, const std::string& name) {
  for (const KnobSpec& k : z.knobs) {
    if (k.name == name) return true;
  }
  return false;
}
}  // namespace

SchemedModel make_schemed_model(Graph given, std::string_view model, std::string_view knobs,
                                const std::string& spec, const ClusterSpec& cluster,
                                const std::vector<int>& mesh_shape) {
  SchemedModel m;
  m.graph = std::move(given);
  m.params = static_cast<double>(m.graph.parameter_count());
  m.forward_flops = m.graph.model_forward_flops(FlopsConvention::megatron);
  m.forward_flops_causal = m.graph.model_forward_flops(FlopsConvention::causal);
  try {
    m.scheme = make_scheme(spec, m.graph, cluster, mesh_shape);
    return m;
  } catch (const HeadsNotDivisible& e) {
    const ZooModel* z = find_zoo_model(model);
    std::map<std::string, std::string> kv = parse_knob_list(knobs);
    if (!z || !has_knob(*z, "heads_pad") || kv.count("heads_pad")) throw;
    kv["heads_pad"] = std::to_string(e.tp());
    const int64_t per_rank = (e.heads() + e.tp() - 1) / e.tp();
    m.graph = build_zoo_model(model, kv);
    m.scheme = make_scheme(spec, m.graph, cluster, mesh_shape);
    const std::string tp = std::to_string(e.tp());
    m.note = "megatron tp=" + tp + " does not divide the " + std::to_string(e.heads()) + " attention heads of " +
             std::string(z->name) + ", which Megatron-LM refuses; costed as an uneven head split, every rank priced as " +
             "the busiest (" + std::to_string(per_rank) + " heads, heads_pad=" + tp +
             "; re-cost an --out scheme with --set heads_pad=" + tp + ")";
    return m;
  }
}

void restate_for_given_model(CostReport& r, const SchemedModel& m) {
  r.params = m.params;
  r.model_flops_per_iteration = 3 * m.forward_flops;
  r.model_flops_causal_per_iteration = 3 * m.forward_flops_causal;
  if (r.iteration_s > 0) r.model_tflops_per_gpu = r.model_flops_per_iteration / r.iteration_s / r.devices / 1e12;
}

}  // namespace autoddl::costmodel
