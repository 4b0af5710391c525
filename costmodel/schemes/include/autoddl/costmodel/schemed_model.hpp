// The model a --scheme is costed on. Megatron-LM refuses a tensor-parallel degree that does not
// divide the attention heads; for a zoo model autoddl instead prices the uneven head split those
// ranks would make: the model is rebuilt with heads padded to a multiple of tp (`heads_pad`),
// so every rank holds ⌈heads/tp⌉ heads, as the busiest rank does, and that rank sets the
// iteration time, the memory peak and the per-device bytes. A note says so.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/graph.hpp"
#include "autoddl/costmodel/scheme.hpp"

namespace autoddl::costmodel {

struct SchemedModel {
  Graph graph;               // what is costed: the model, with padded heads when `note` is set
  Scheme scheme;             // lowered on `graph`
  double params = 0;         // of the model as given (without padded heads)
  double forward_flops = 0;         // model FLOPs of the model as given, Megatron-LM's convention
  double forward_flops_causal = 0;  // the same, causal cores halved
  std::string note;          // empty unless the heads were padded
};

// Lowers `spec` on `given` (make_scheme) over `mesh_shape` (empty: the scheme's default mesh).
// `model` and `knobs` say what `given` was built from: a zoo model's name and its knob list
// ("layers=24,hidden=2048"), or a graph file's name (no knobs). For a megatron spec whose tp
// does not divide a zoo model's heads (and no explicit heads_pad), rebuilds the model with
// heads_pad = tp and lowers again; `note` then says so. Other errors propagate as InputError.
SchemedModel make_schemed_model(Graph given, std::string_view model, std::string_view knobs,
                                const std::string& spec, const ClusterSpec& cluster,
                                const std::vector<int>& mesh_shape);

// A CostReport of `m.graph` restated for the model as given: params, model FLOPs and model
// TFLOP/s per GPU count the real heads only (padding is work, not model FLOPs).
void restate_for_given_model(CostReport& r, const SchemedModel& m);

}  // namespace autoddl::costmodel
