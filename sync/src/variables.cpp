#include "autoddl/sync/variables.hpp"

#include <algorithm>
#include <numeric>

namespace autoddl::sync {

using costmodel::Graph;
using costmodel::OpKind;
using costmodel::Tensor;
using costmodel::TensorRole;

double Variable::rows_touched(int workers) const {
  if (!sparse) return static_cast<double>(rows());
  double per_worker = static_cast<double>(batched_lookups) / std::max(1, workers) +
                      static_cast<double>(replicated_lookups);
  return std::min(static_cast<double>(rows()), std::max(1.0, per_worker));
}

std::vector<Variable> extract_variables(const Graph& g) {
  std::vector<Variable> vars;
  for (int t = 0; t < static_cast<int>(g.tensors.size()); ++t) {
    const Tensor& tensor = g.tensors[t];
    if (tensor.role != TensorRole::parameter) continue;
    Variable v;
    v.name = tensor.name;
    v.shape = tensor.shape;
    v.dtype = tensor.dtype;
    v.bytes = static_cast<double>(tensor.bytes());
    v.first_reader = static_cast<int>(g.ops.size());
    bool all_lookups = !g.consumers[t].empty();
    for (int op_index : g.consumers[t]) {
      const costmodel::Op& op = g.ops[op_index];
      v.first_reader = std::min(v.first_reader, op_index);
      // Embedding's inputs are (table, indices): a lookup of this table reads input 0.
      if (op.kind == OpKind::embedding && op.inputs.at(0) == t && op.inputs.at(1) != t) {
        const Tensor& idx = g.tensors[op.inputs[1]];
        bool batched = !idx.shape.empty() && idx.shape[0] == g.batch;
        (batched ? v.batched_lookups : v.replicated_lookups) += idx.elements();
        v.embedding = true;
      } else {
        all_lookups = false;
      }
    }
    v.sparse = all_lookups;
    if (!v.sparse) v.batched_lookups = v.replicated_lookups = 0;
    vars.push_back(std::move(v));
  }
  return vars;
}

std::vector<int> backward_ready_order(const std::vector<Variable>& vars) {
  std::vector<int> order(vars.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (vars[a].first_reader != vars[b].first_reader)
      return vars[a].first_reader > vars[b].first_reader;
    return a > b;
  });
  return order;
}

}  // namespace autoddl::sync
