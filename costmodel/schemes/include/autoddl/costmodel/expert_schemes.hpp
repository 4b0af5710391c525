// Expert schemes lowered to real per-op nd-SBP signatures (not separate formulas), so the one
// cost model judges them like searched schemes. Each mesh dim gets a role:
//  - data: activations split on the batch axis, parameters broadcast (gradients partial → sync);
//  - tensor (Megatron-LM, Shoeybi et al. 2019; sequence parallel, Korthikanti et al. 2022):
//    a matmul with a weight is column-parallel unless its input arrives split on k, then
//    row-parallel; embeddings are vocab-parallel; other ops take the cheapest signature that
//    keeps their inputs' splits (creating a sequence split only with sp);
//  - pipeline: the stage index (Megatron's outermost rank order: [pp, dp, tp]).
// Spec strings: dp | zero1 | zero3 | owt | megatron:tp=T,pp=P,dp=D[,mb=M][,interleave=V]
// [,sp=0|1][,recompute=none|selective|full][,schedule=gpipe|1f1b][,cp=C]... | a scheme JSON file
// (every key: docs/schemes.md).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/graph.hpp"
#include "autoddl/costmodel/scheme.hpp"

namespace autoddl::costmodel {

// expert: Mixture-of-Experts expert parallelism on the ops between a dispatch and its combine
// (expert-major tensors split on the experts axis, expert weights on their first axis, the
// dispatch's token slots and the combine's input split on the slots); only in
// LoweringOptions::expert_roles.
// context: context parallelism (Megatron-Core's --context-parallel-size): activations split on
// the sequence axis, kept as produced; fused attention reads its queries sequence-split and
// gathers keys and values (the KV exchange); parameters broadcast (gradients partial → sync).
enum class DimRole : uint8_t { data, tensor, expert, context };

// Thrown by make_scheme for megatron when tp does not divide the attention heads (Megatron-LM
// refuses heads % tp != 0). A caller that can rebuild the model with heads padded to a multiple
// of tp (the zoo's `heads_pad` knob) may cost the uneven split's busiest rank instead.
class HeadsNotDivisible : public InputError {
 public:
  HeadsNotDivisible(int tp, int64_t heads, const std::string& model)
      : InputError("--scheme", "tp",
                   std::to_string(tp) + " does not split the " + std::to_string(heads) +
                       " attention heads of " + model + " evenly (Megatron-LM needs heads % tp == 0)"),
        tp_(tp), heads_(heads) {}
  int tp() const { return tp_; }
  int64_t heads() const { return heads_; }

 private:
  int tp_;
  int64_t heads_;
};

struct LoweringOptions {
  bool sequence_parallel = false;
  bool conv_data_parallel = false;  // owt: conv ops use the data rule on tensor dims
  // Per SBP dim, the role of the MoE ops (those reading or writing an expert-major tensor,
  // expert_major_tensors()); empty = the dims' roles. Megatron-Core's expert groups re-cut the
  // dense [dp, tp] ranks into [edp, ep, etp]: data, expert and tensor roles here.
  std::vector<DimRole> expert_roles;
};

// Picks one signature per op: dims[d]'s role decides the 1-D signature on SBP dim d.
// Throws InputError("--scheme", ...) if some op has no signature that fits the roles.
std::vector<OpSignature> lower_roles(const Graph& graph, const std::vector<int>& sbp_shape,
                                     const std::vector<DimRole>& roles, int micro_batches,
                                     const LoweringOptions& opt);

// Whether each tensor carries the batch in axis 0: graph inputs whose axis 0 is the batch,
// and op outputs (rank >= 1) of ops reading such a tensor.
std::vector<bool> batch_major_tensors(const Graph& graph);

// Builds a named expert scheme or loads a scheme JSON. `mesh_shape` empty = the cluster's
// default mesh (megatron builds its own [pp, dp, tp]). Throws InputError("--scheme", field, why).
Scheme make_scheme(const std::string& spec, const Graph& graph, const ClusterSpec& cluster,
                   const std::vector<int>& mesh_shape);

// The expert schemes, one row each: make_scheme() (`cost --scheme`), search's baselines
// (search/src/methods/expert.cpp) and --help read this table. Adding one is its builder (one
// file, or a function of expert_schemes.cpp) plus one row of expert_schemes().
struct ExpertSchemeRow {
  std::string_view name;         // "dp"; a spec is the name, or name:params for those that take them
  std::string_view usage;        // how a spec is written, for --help ("megatron:tp=T,pp=P,...")
  std::string_view short_usage;  // in the unknown-scheme error ("megatron:tp=..,pp=..,dp=..")
  std::string_view summary;      // one line, what it is
  // Parses `params` (the text after "name:", empty for those that take none) and lowers the
  // scheme on the graph and cluster. Throws InputError("--scheme", field, why).
  Scheme (*make)(const std::string& params, const Graph& g, const ClusterSpec& c,
                 const std::vector<int>& mesh_shape);
  bool takes_params = false;  // then the name alone is an error naming `example`
  // Why the scheme does not apply to a graph (search skips it as a baseline), "" when it does;
  // nullptr = it always applies.
  std::string (*not_applicable)(const Graph& g) = nullptr;
  std::string_view example = {};  // a complete spec, for those that take params
};
const std::vector<ExpertSchemeRow>& expert_schemes();
const ExpertSchemeRow* find_expert_scheme(std::string_view name);  // nullptr if unknown

// The usage of every expert scheme (the rows' `usage`), for --help.
std::vector<std::string> expert_scheme_names();

}  // namespace autoddl::costmodel
