// ResNet-50 v1.5 (He et al. 2016; torchvision's layout, stride on the 3x3 convolution): a 7x7
// stem, four stages of 3/4/6/3 bottlenecks (1x1, 3x3, 1x1 convolutions without bias, each
// followed by BatchNorm; a projection shortcut opens each stage), global average pooling and a
// 1000-way fc. 25,557,032 parameters and ~4.1 G multiply-accumulates per 224² image.
// Bottlenecks are blocks "layer1.0" .. "layer4.2", as torchvision names them.
// ResNet-101 is the same network with 3/4/23/3 bottlenecks: 44,549,160 parameters, ~7.8 G MACs.
#include "models.hpp"

namespace autoddl::costmodel::zoo {

namespace {
// Per stage: the bottleneck's inner width (its output is 4x) and the stride of the stage's first
// 3x3 convolution; the depth only changes the number of bottlenecks per stage.
const int kWidths[] = {64, 128, 256, 512};
const int kStrides[] = {1, 2, 2, 2};

int bottleneck(GraphBuilder& b, int x, int64_t width, int stride, bool project) {
  int y = b.relu("relu1", b.bn("bn1", b.conv("conv1", x, width, 1, 1, 0, false)));
  y = b.relu("relu2", b.bn("bn2", b.conv("conv2", y, width, 3, stride, 1, false)));
  y = b.bn("bn3", b.conv("conv3", y, 4 * width, 1, 1, 0, false));
  int shortcut = x;
  if (project) {
    shortcut = b.bn("downsample.bn", b.conv("downsample.conv", x, 4 * width, 1, stride, 0, false));
  }
  return b.relu("relu3", b.add("add", y, shortcut));
}

Graph build_resnet(const Knobs& k, const char* name, const int (&blocks)[4]) {
  int64_t batch = k.get_int("batch"), image = k.get_int("image", 32);
  int64_t classes = k.get_int("classes");
  DType dtype = model_dtype(k);
  GraphBuilder b(name, std::string("zoo:") + name, batch, dtype);
  int h = b.input("images", {batch, 3, image, image}, dtype);
  int labels = b.input("labels", {batch}, DType::int64);
  h = b.relu("relu1", b.bn("bn1", b.conv("conv1", h, 64, 7, 2, 3, false)));
  h = b.pool("maxpool", h, PoolFn::max, 3, 2, 1);
  for (int s = 0; s < 4; ++s) {
    for (int i = 0; i < blocks[s]; ++i) {
      b.begin_block("layer" + std::to_string(s + 1) + "." + std::to_string(i));
      h = bottleneck(b, h, kWidths[s], i == 0 ? kStrides[s] : 1, i == 0);
      b.end_block();
    }
  }
  h = b.global_avg_pool("avgpool", h);
  h = b.reshape("flatten", h, {batch, b.shape(h)[1]});
  h = b.linear("fc", h, classes);
  b.cross_entropy("loss", h, labels);
  return b.finish();
}

Graph build50(const Knobs& k) { return build_resnet(k, "resnet50", {3, 4, 6, 3}); }
Graph build101(const Knobs& k) { return build_resnet(k, "resnet101", {3, 4, 23, 3}); }
}  // namespace

ZooModel resnet50_model() {
  return {"resnet50",
          "ResNet-50 v1.5 (torchvision layout), NCHW images, BatchNorm, softmax loss",
          image_classifier_knobs(),
          build50};
}

ZooModel resnet101_model() {
  return {"resnet101",
          "ResNet-101 v1.5 (torchvision layout): ResNet-50 with 23 bottlenecks in stage 3",
          image_classifier_knobs(),
          build101};
}

}  // namespace autoddl::costmodel::zoo
