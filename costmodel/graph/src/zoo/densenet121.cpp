// DenseNet-121 (Huang et al. 2017; torchvision's layout): a 7x7 stem, four dense blocks of
// 6/12/24/16 layers (BN, ReLU, 1x1 conv to 4·growth channels, BN, ReLU, 3x3 conv to `growth` =
// 32 channels, concatenated onto the block's features), transitions (BN, ReLU, 1x1 conv halving
// the channels, 2x2 average pooling), a final BN, global average pooling and a 1000-way fc.
// 7,978,856 parameters and ~2.83 G multiply-accumulates per 224² image.
// Dense layers are blocks "denseblock<b>.denselayer<i>" (1-based, as torchvision names them).
#include "models.hpp"

namespace autoddl::costmodel::zoo {

namespace {
constexpr int kBlockLayers[] = {6, 12, 24, 16};
constexpr int64_t kGrowth = 32, kBottleneckWidth = 4 * kGrowth, kStemChannels = 64;

int dense_layer(GraphBuilder& b, int x) {
  int y = b.conv("conv1", b.relu("relu1", b.bn("norm1", x)), kBottleneckWidth, 1, 1, 0, false);
  y = b.conv("conv2", b.relu("relu2", b.bn("norm2", y)), kGrowth, 3, 1, 1, false);
  return b.concat("concat", {x, y}, 1);
}

Graph build(const Knobs& k) {
  int64_t batch = k.get_int("batch"), image = k.get_int("image", 32);
  int64_t classes = k.get_int("classes");
  DType dtype = model_dtype(k);
  GraphBuilder b("densenet121", "zoo:densenet121", batch, dtype);
  int h = b.input("images", {batch, 3, image, image}, dtype);
  int labels = b.input("labels", {batch}, DType::int64);
  h = b.relu("relu0", b.bn("norm0", b.conv("conv0", h, kStemChannels, 7, 2, 3, false)));
  h = b.pool("pool0", h, PoolFn::max, 3, 2, 1);
  for (int blk = 0; blk < 4; ++blk) {
    for (int i = 0; i < kBlockLayers[blk]; ++i) {
      b.begin_block("denseblock" + std::to_string(blk + 1) + ".denselayer" + std::to_string(i + 1));
      h = dense_layer(b, h);
      b.end_block();
    }
    if (blk == 3) break;
    b.begin_block("transition" + std::to_string(blk + 1));
    int64_t channels = b.shape(h)[1];
    h = b.conv("conv", b.relu("relu", b.bn("norm", h)), channels / 2, 1, 1, 0, false);
    h = b.pool("pool", h, PoolFn::avg, 2, 2, 0);
    b.end_block();
  }
  h = b.relu("relu5", b.bn("norm5", h));
  h = b.global_avg_pool("avgpool", h);
  h = b.reshape("flatten", h, {batch, b.shape(h)[1]});
  h = b.linear("classifier", h, classes);
  b.cross_entropy("loss", h, labels);
  return b.finish();
}
}  // namespace

ZooModel densenet121_model() {
  return {"densenet121",
          "DenseNet-121 (torchvision layout, growth 32), NCHW images, BatchNorm, softmax loss",
          image_classifier_knobs(),
          build};
}

}  // namespace autoddl::costmodel::zoo
