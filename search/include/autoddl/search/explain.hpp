// What a searched scheme chose, per layer, and where it differs from a reference (the best
// expert): rows of runs of ops with one Op::block label (consecutive identical layers folded),
// each with its compute, boxing and gradient-sync seconds per iteration and the SBP of its
// weights as used (@storage when stored otherwise) and of its output; against a reference, the
// reference's choice where it differs and the whole-iteration differences that the change buys
// (compute, exposed communication, bubble, memory), and per op position (attn.proj, lm_head)
// the layouts it changed, in how many layers. Under an interleaved schedule consecutive layers
// sit on different stages; rows then fold across stages and carry no stage label.
// `autoddl search --explain` prints these.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "autoddl/costmodel/graph.hpp"
#include "autoddl/search/searcher.hpp"

namespace autoddl::search {

struct ExplainRow {
  std::string label;       // "layer.3", "[stage 1] layer.12", "(lm_head)" for ops outside blocks
  std::string last;        // the last folded layer's label ("layer.95"); == label when count == 1
  int count = 1;           // layers folded into this row (costs below are per layer)
  double compute_s = 0, boxing_s = 0, sync_s = 0;
  std::string choice;      // "q:(B,S(1)) ... -> (S(0),B)"
  std::string reference;   // the reference's choice where it differs; empty where the same
  double reference_s = 0;  // the reference's compute + boxing + sync per layer (where it differs)
  std::string span;        // the row's name in a table: label, or "layer.3 .. layer.95 (x93, each)"
};

// One layout change against the reference at an op position: the op's weights as used
// (@storage), and for an op that ends a layer or stands outside layers its output SBP.
struct ExplainChange {
  std::string op;           // "attn.proj" (the op's name inside its layer), "lm_head"
  std::string from, to;     // "(B,S(0))" -> "(B,B)"; "-> (S(0),P)" for an output
  int count = 0;            // layers (or 1 for an op outside layers) where it changed so
  int of = 0;               // layers holding this op position
  std::string first, last;  // first and last layer changed ("layer.1", "layer.95")
};

struct Explanation {
  std::vector<ExplainRow> rows;
  std::vector<ExplainChange> changes;  // most layers first
  // Whole-scheme settings that differ from the reference: "mesh 2x4 (megatron: 4x2x1)",
  // "micro-batches 32 (megatron: 64)", "chunks per stage 16 (megatron: 8)", "recompute ...",
  // "optimizer sharded (megatron: replicated)".
  std::vector<std::string> config_changes;
  std::string reference_method;  // empty without a reference
  // result − reference, per iteration (seconds) and peak memory (bytes); rows that differ.
  double iteration_delta_s = 0, compute_delta_s = 0, comm_delta_s = 0, bubble_delta_s = 0;
  double memory_delta_bytes = 0;
  int rows_changed = 0, rows_total = 0;  // layers and ops outside layers, before folding
  // On a Mixture-of-Experts model: the expert layout chosen, and, when the reference is the
  // Megatron grid, its best point per expert layout, fastest first: the why.
  struct Experts {
    int64_t experts = 0, ep = 1, etp = 1;  // routed experts; product of the dims splitting them
    double all_to_all_exposed_s = 0;
  };
  struct ExpertAlternative {
    std::string layout;  // "ep=4,etp=1", "replicated"
    double iteration_s = 0, all_to_all_exposed_s = 0;
    bool feasible = false;
  };
  std::optional<Experts> experts;
  std::vector<ExpertAlternative> expert_alternatives;
};

// `reference` (may be null) must be a scheme of the same graph.
Explanation explain(const SearchResult& result, const costmodel::Graph& g, const SearchResult* reference);

}  // namespace autoddl::search
