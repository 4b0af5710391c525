// Knob checks shared by several zoo models: the model dtype must be floating-point, and the
// attention heads must divide the hidden size (each head gets hidden/heads features).
#include <string>

#include "models.hpp"

namespace autoddl::costmodel::zoo {

void check_heads_divide_hidden(const Knobs& k, int64_t hidden, int64_t heads) {
  if (hidden % heads != 0) {
    k.fail("heads", "must divide hidden (" + std::to_string(hidden) + " % " +
                        std::to_string(heads) + " != 0)");
  }
}

DType model_dtype(const Knobs& k) {
  DType t = k.get_dtype("dtype");
  if (t == DType::fp8) return DType::bf16;  // FP8 GEMMs over bf16 tensors (build_zoo_model)
  if (t != DType::fp32 && t != DType::fp16 && t != DType::bf16) {
    k.fail("dtype",
           "must be a floating-point type (fp32, fp16, bf16 or fp8), not " + std::string(dtype_name(t)));
  }
  return t;
}

bool flash_attention(const Knobs& k) {
  const int64_t f = k.get_int("flash", 0);
  if (f > 1) k.fail("flash", "must be 0 or 1, not " + std::to_string(f));
  return f == 1;
}

int64_t padded_vocab(const Knobs& k, int64_t vocab) {
  int64_t pad = k.get_int("vocab_pad");
  return (vocab + pad - 1) / pad * pad;
}

int64_t padded_heads(const Knobs& k, int64_t heads) {
  int64_t pad = k.get_int("heads_pad");
  return (heads + pad - 1) / pad * pad;
}

std::vector<KnobSpec> with_transformer_knobs(std::vector<KnobSpec> own) {
  own.push_back({"vocab_pad", "128",
                 "pad the vocabulary to a multiple of this, like Megatron-LM's --make-vocab-size-divisible-by (1 = none)"});
  own.push_back({"heads_pad", "1",
                 "pad the attention heads to a multiple of this with heads of the same size (1 = none); autoddl "
                 "sets it to tp when a Megatron tp does not divide heads"});
  own.push_back({"flash", "0",
                 "1 = fused FlashAttention core (no s x s tensors in memory, causal tiles skipped for GPT); 0 = "
                 "the unfused core of Megatron-LM's 2021-2022 papers"});
  own.push_back({"batch", "8", "global batch size (sequences)"});
  own.push_back({"dtype", "fp16", "parameter and activation dtype; fp8: FP8 GEMMs over bf16 tensors (Transformer Engine)"});
  return own;
}

std::vector<KnobSpec> image_classifier_knobs() {
  return {{"batch", "32", "global batch size"},
          {"image", "224", "image height and width (>= 32)"},
          {"classes", "1000", "output classes"},
          {"dtype", "fp32", "parameter and activation dtype"}};
}

}  // namespace autoddl::costmodel::zoo
