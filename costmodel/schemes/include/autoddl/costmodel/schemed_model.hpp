// The model a --scheme is costed on. Megatron-LM refuses a tensor-parallel degree that does not
// divide the attention heads; for a zoo model autoddl instead prices the uneven head split those
// ranks would make: the model is rebuilt with heads padded to a multiple of tp (`heads_pad`),
// so every rank holds ⌈heads/tp⌉ heads, as the busiest rank does, and that rank sets the
// iteration time, the memory peak and the per-device bytes. A note says so.
#pragma once
#include <string>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/graph.hpp"
#include "autoddl/costmodel/scheme.hpp"

namespace autoddl::cli {

struct SchemedModel {
  costmodel::Graph graph;    // what is costed: the model, with padded heads when `note` is set
  costmodel::Scheme scheme;  // lowered on `graph`
  double params = 0;         // of the model as given (without padded heads)
  double forward_flops = 0;  // of the model as given
  std::string note;          // empty unless the heads were padded
};

// Loads the model (load_model) and lowers `spec` on it (make_scheme) over the --mesh text (empty:
// the scheme's default mesh); for a megatron spec whose tp does not divide a zoo model's heads
// (and no explicit heads_pad), rebuilds it with heads_pad = tp. Prints the note on stderr.
// Other errors propagate as InputError.
SchemedModel load_schemed_model(const std::string& model, const std::string& knobs,
                                const std::string& spec, const costmodel::ClusterSpec& cluster,
                                const std::string& mesh);

// A CostReport of `m.graph` restated for the model as given: params, model FLOPs and model
// TFLOP/s per GPU count the real heads only (padding is work, not model FLOPs).
void restate_for_given_model(costmodel::CostReport& r, const SchemedModel& m);

}  // namespace autoddl::cli
