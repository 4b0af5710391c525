// See activation_memory.hpp. The rules per op kind live with the kind (ops/<kind>.cpp, the
// `saved` column of the op registry); this file only combines them per tensor.
#include "autoddl/costmodel/activation_memory.hpp"

#include <algorithm>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/op_compute.hpp"
#include "autoddl/costmodel/op_registry.hpp"

namespace autoddl::costmodel {

namespace {
bool is_activation(const Tensor& t) { return t.role == TensorRole::activation && t.producer >= 0; }

// Per tensor, per byte of tensor: the kept copy in its own dtype (1, or 4/width for fp32), and
// apart from it (a storage of its own) the FP8 copy and the mask bytes. An FP8 GEMM
// (runs_fp8_gemm) keeps its activation operand as the FP8 copy it multiplied, 1 byte per element
// (Transformer Engine's Linear saves the quantized input), shared by the tensor's FP8 readers.
void saved_parts(const Graph& graph, std::vector<double>& full, std::vector<double>& mask,
                 std::vector<uint32_t>* saves_input = nullptr) {
  const size_t n = graph.tensors.size();
  full.assign(n, 0);
  mask.assign(n, 0);
  if (saves_input) saves_input->assign(graph.ops.size(), 0);
  std::vector<double> fp8_copy(n, 0);
  for (size_t i = 0; i < graph.ops.size(); ++i) {
    const Op& op = graph.ops[i];
    const OpKindInfo& info = op_kind_info(op.kind);
    if (!info.saved) continue;
    const SavedForBackward s = info.saved(graph, op);
    const bool fp8 = runs_fp8_gemm(graph, op);
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      const int t = op.inputs[k];
      if (!(s.inputs & (1u << k)) || !is_activation(graph.tensors[t])) continue;
      if (saves_input) (*saves_input)[i] |= 1u << k;
      const double width = dtype_bytes(graph.tensors[t].dtype);
      if (fp8 && k == 0) {
        fp8_copy[t] = 1.0 / width;
        continue;
      }
      full[t] = std::max(full[t], s.inputs_in_fp32 ? std::max(1.0, 4.0 / width) : 1.0);
    }
    for (int t : op.outputs) {
      if (s.output) full[t] = std::max(full[t], 1.0);
      mask[t] += s.mask_bytes_per_element / dtype_bytes(graph.tensors[t].dtype);
    }
  }
  for (size_t t = 0; t < n; ++t) mask[t] += fp8_copy[t];  // kept beside the full copy, like the mask
}
}  // namespace

std::vector<double> saved_factors(const Graph& graph) {
  std::vector<double> full, mask;
  saved_parts(graph, full, mask);
  for (size_t t = 0; t < full.size(); ++t) full[t] += mask[t];
  return full;
}

ActivationFactors activation_factors(const Graph& graph, Recompute recompute, uint32_t modules) {
  ActivationFactors f;
  std::vector<double> full, mask;
  saved_parts(graph, full, mask, &f.saves_input);
  f.kept.resize(full.size());
  for (size_t t = 0; t < full.size(); ++t) f.kept[t] = full[t] + mask[t];
  f.recomputed.assign(f.kept.size(), 0);
  if (recompute == Recompute::selective) {
    for (const Op& op : graph.ops) {
      if (!recomputed(graph, op, recompute, modules)) continue;
      for (int t : op.outputs) f.kept[t] = 0;
    }
  } else if (recompute == Recompute::full) {
    for (const Op& op : graph.ops) {
      for (int t : op.outputs) {
        bool enters_block = false;  // read by an op of another block: that block's checkpoint
        for (int c : graph.consumers[t]) {
          const std::string& b = graph.ops[c].block;
          enters_block |= !b.empty() && b != op.block;
        }
        if (!op.block.empty()) {  // re-run in backward: live only while its block is
          f.recomputed[t] = f.kept[t];
          f.kept[t] = 0;
          // What leaves the block for an op outside any block stays kept if that op needs it.
          for (int c : graph.consumers[t]) {
            if (graph.ops[c].block.empty()) f.kept[t] = f.recomputed[t];
          }
        }
        if (enters_block) f.kept[t] = std::max(f.kept[t], 1.0 + mask[t]);
      }
    }
  }
  return f;
}

}  // namespace autoddl::costmodel
