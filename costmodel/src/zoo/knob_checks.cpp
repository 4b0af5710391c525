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
  if (t != DType::fp32 && t != DType::fp16 && t != DType::bf16) {
    k.fail("dtype",
           "must be a floating-point type (fp32, fp16 or bf16), not " + std::string(dtype_name(t)));
  }
  return t;
}

int64_t padded_vocab(const Knobs& k, int64_t vocab) {
  int64_t pad = k.get_int("vocab_pad");
  return (vocab + pad - 1) / pad * pad;
}

int64_t padded_heads(const Knobs& k, int64_t heads) {
  int64_t pad = k.get_int("heads_pad");
  return (heads + pad - 1) / pad * pad;
}

std::vector<KnobSpec> image_classifier_knobs() {
  return {{"batch", "32", "global batch size"},
          {"image", "224", "image height and width (>= 32)"},
          {"classes", "1000", "output classes"},
          {"dtype", "fp32", "parameter and activation dtype"}};
}

}  // namespace autoddl::costmodel::zoo
