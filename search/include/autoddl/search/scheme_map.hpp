// Between table choices and cost-model Schemes: a choice vector becomes a Scheme that
// costmodel::evaluate() judges and scheme_to_json() writes; an expert scheme's signatures map
// back into choices, which is how data-parallel and Megatron-like seeds enter the search.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "autoddl/costmodel/scheme.hpp"
#include "autoddl/search/cost_tables.hpp"

namespace autoddl::search {

costmodel::Scheme to_scheme(const CostTables& t, const std::vector<int>& choice, const std::string& name);

// The framework options a search keeps from the scheme it started from, which the tables do not
// choose: the pipeline schedule, scatter-gather sends, the gradient bucket size, tp / p2p
// overlap and the gradient reduce width; the parameter all-gather overlaps only where `to`
// still shards the optimizer.
void keep_framework_options(const costmodel::Scheme& from, costmodel::Scheme& to);

// Table options for exactly a scheme's configuration: its mesh, pipeline dim, stages per op
// (op_chunk % stages), chunks when interleaved, micro-batches, recompute, optimizer sharding and
// p2p overlap (what cd-expert builds its tables from).
TableOptions table_options_of(const costmodel::Scheme& s, int n_ops);

// Per op the choice with the signature sigs[i] (ZeRO storage for parameters that `storage`
// shards where their first reader uses them replicated, or everywhere with zero_all; storage
// may be null). Returns false when some signature is not among the op's choices.
bool from_signatures(const CostTables& t, const std::vector<costmodel::OpSignature>& sigs,
                     const std::vector<costmodel::NdSbp>* storage, std::vector<int>& choice,
                     bool zero_all = false);

struct Seed {
  std::string name;  // "dp", "zero3", "megatron", "roles:TD", "roles:DT+sp", "axes:01", "owt", "random:<seed>"
  std::vector<int> choice;
};

// Data parallel (every SBP dim a data dim), ZeRO-3 storage of it, Megatron-like (last SBP dim
// tensor-parallel, the others data), every other mix of data and tensor dims with and without
// sequence parallelism, and for CNNs one weird trick, each lowered by costmodel::lower_roles for
// the tables' mesh and micro-batches; axis patterns (batch-major activations split on axis 0 or
// 1 per dim); then `random_restarts` uniform random assignments from rng_seed.
std::vector<Seed> make_seeds(const CostTables& t, int random_restarts, uint64_t rng_seed);

}  // namespace autoddl::search
