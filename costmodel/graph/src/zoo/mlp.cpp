// MLP: `layers` fully connected layers of width `hidden` (each a (hidden, hidden) weight plus a
// bias), ReLU between layers, and a cross-entropy loss over `hidden` classes on the last layer's
// output. The simplest graph for checking tensor-parallel rules (Megatron's column- then
// row-parallel pair is two consecutive layers).
#include "models.hpp"

namespace autoddl::costmodel::zoo {

namespace {
Graph build(const Knobs& k) {
  int64_t layers = k.get_int("layers"), hidden = k.get_int("hidden"), batch = k.get_int("batch");
  DType dtype = model_dtype(k);
  GraphBuilder b("mlp", "zoo:mlp", batch, dtype);
  int h = b.input("x", {batch, hidden}, dtype);
  int labels = b.input("labels", {batch}, DType::int64);
  for (int64_t i = 0; i < layers; ++i) {
    b.begin_block("layer." + std::to_string(i));
    h = b.linear("fc", h, hidden);
    if (i + 1 < layers) h = b.relu("relu", h);
    b.end_block();
  }
  b.cross_entropy("loss", h, labels);
  return b.finish();
}
}  // namespace

ZooModel mlp_model() {
  return {"mlp",
          "multi-layer perceptron: `layers` x Linear(hidden, hidden) with ReLU, softmax loss",
          {{"layers", "4", "number of Linear layers"},
           {"hidden", "1024", "width of every layer (and number of classes)"},
           {"batch", "64", "global batch size"},
           {"dtype", "fp32", "parameter and activation dtype"}},
          build};
}

}  // namespace autoddl::costmodel::zoo
