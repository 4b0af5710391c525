// VGG16 (Simonyan & Zisserman 2015, configuration D) as in torchvision: 13 3x3 convolutions
// (pad 1, with bias) in five stages separated by 2x2 max pools, then fc6/fc7 (4096, ReLU,
// dropout) and fc8 (classes). At 224² and 1000 classes: 138,357,544 parameters and 15.5 G
// multiply-accumulates per image. Conv stages are blocks "stage.1".."stage.5". torchvision's
// adaptive 7x7 pool is the identity at 224² and is left out (fc6 reads 512·(image/32)²).
#include "models.hpp"

namespace autoddl::costmodel::zoo {

namespace {
// Output channels of each stage's convolutions.
const std::vector<std::vector<int64_t>> kStages = {
    {64, 64}, {128, 128}, {256, 256, 256}, {512, 512, 512}, {512, 512, 512}};

Graph build(const Knobs& k) {
  int64_t batch = k.get_int("batch"), image = k.get_int("image", 32);
  int64_t classes = k.get_int("classes");
  DType dtype = model_dtype(k);
  GraphBuilder b("vgg16", "zoo:vgg16", batch, dtype);
  int h = b.input("images", {batch, 3, image, image}, dtype);
  int labels = b.input("labels", {batch}, DType::int64);
  for (size_t s = 0; s < kStages.size(); ++s) {
    b.begin_block("stage." + std::to_string(s + 1));
    for (size_t c = 0; c < kStages[s].size(); ++c) {
      std::string n = std::to_string(c + 1);
      h = b.relu("relu" + n, b.conv("conv" + n, h, kStages[s][c], 3, 1, 1, /*bias=*/true));
    }
    h = b.pool("pool", h, PoolFn::max, 2, 2, 0);
    b.end_block();
  }
  Shape s = b.shape(h);
  h = b.reshape("flatten", h, {batch, s[1] * s[2] * s[3]});
  h = b.dropout("drop6", b.relu("relu6", b.linear("fc6", h, 4096)));
  h = b.dropout("drop7", b.relu("relu7", b.linear("fc7", h, 4096)));
  h = b.linear("fc8", h, classes);
  b.cross_entropy("loss", h, labels);
  return b.finish();
}
}  // namespace

ZooModel vgg16_model() {
  return {"vgg16",
          "VGG16 (configuration D, torchvision layout), NCHW images, softmax loss",
          image_classifier_knobs(),
          build};
}

}  // namespace autoddl::costmodel::zoo
