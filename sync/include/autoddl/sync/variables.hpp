// The trainable variables of a model as gradient synchronization sees them: bytes, shape,
// sparsity and when in the backward pass each gradient becomes ready. Extracted from a
// costmodel Graph without changing it: sparsity is computed from the ops that read a parameter.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "autoddl/costmodel/graph.hpp"

namespace autoddl::sync {

struct Variable {
  std::string name;           // the parameter tensor's name ("fc1.weight")
  costmodel::Shape shape;
  costmodel::DType dtype = costmodel::DType::fp32;
  double bytes = 0;           // dense size: elements x dtype size
  // Sparse gradient: every reader is an Embedding lookup of this table, so a step's gradient
  // holds only the rows its indices touched (TF IndexedSlices, torch sparse grads). A table
  // also read densely (BERT's word embedding tied to the MLM decoder) has a dense gradient.
  bool sparse = false;
  // Sparse only: indices looked up per iteration, summed over lookups. Batched lookups (index
  // tensors whose leading dimension is the batch: token ids) are split among the replicas;
  // replicated ones (BERT's position ids, shape (seq)) are made whole by every replica.
  int64_t batched_lookups = 0;
  int64_t replicated_lookups = 0;
  // The forward index of the first op reading the variable: its gradient is complete once the
  // backward reaches that op, so gradients become ready in decreasing first_reader order.
  int first_reader = 0;
  // Some reader is an Embedding lookup of it (sparse or not; BERT's tied word embedding is
  // also read by the decoder): AutoSync's VarItem.is_embedding (a ResourceGather consumer).
  bool embedding = false;

  int64_t rows() const { return shape.empty() ? 1 : shape[0]; }
  double row_bytes() const { return bytes / static_cast<double>(rows()); }
  // Rows a worker's gradient carries when `workers` replicas split the global batch evenly
  // (an upper bound: repeated ids touch a row once): min(rows, batched / workers + replicated)
  // for a sparse variable, every row for a dense one.
  double rows_touched(int workers) const;
};

// The parameters of a finalized graph in graph (tensor) order, with sparsity and readiness.
std::vector<Variable> extract_variables(const costmodel::Graph& g);

// Indices of `vars` in the order their gradients become ready in backward (first ready first;
// ties keep graph order, reversed, as frameworks register hooks in reverse parameter order).
std::vector<int> backward_ready_order(const std::vector<Variable>& vars);

}  // namespace autoddl::sync
