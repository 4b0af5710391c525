// Inception-v3 (Szegedy et al. 2016; torchvision's layout without the auxiliary classifier,
// which only trains with aux_logits): the 5-conv stem, Mixed_5b-d (InceptionA), Mixed_6a (B),
// Mixed_6b-e (C, factorized 1x7/7x1), Mixed_7a (D), Mixed_7b-c (E), global average pooling and a
// 1000-way fc; every conv is BasicConv2d (conv without bias, BatchNorm, ReLU). 23,834,568
// parameters (torchvision's 27,161,264 less the 3,326,696 of AuxLogits) and ~5.7 G
// multiply-accumulates per 299² image. Mixed blocks are blocks "Mixed_5b" .. "Mixed_7c".
#include "autoddl/costmodel/signature.hpp"
#include "models.hpp"

namespace autoddl::costmodel::zoo {

int conv_bn_relu(GraphBuilder& b, const std::string& name, int x, int64_t out_channels,
                 int kernel_h, int kernel_w, int stride, int pad_h, int pad_w) {
  int y;
  if (kernel_h == kernel_w && pad_h == pad_w) {
    y = b.conv(name + ".conv", x, out_channels, kernel_h, stride, pad_h, false);
  } else {
    // The "same" padding of an asymmetric stride-1 kernel keeps H and W, so each shifted window
    // has x's shape (module comment in models.hpp). A concat takes at most kMaxOpInputs
    // operands, so the windows are joined in groups, then the groups.
    int remaining = kernel_h * kernel_w;
    std::vector<int> groups;
    while (remaining > 0) {
      int n = std::min(remaining, kMaxOpInputs);
      remaining -= n;
      groups.push_back(n == 1 ? x
                              : b.concat(name + ".im2col" + std::to_string(groups.size()),
                                         std::vector<int>(static_cast<size_t>(n), x), 1));
    }
    int cols = groups.size() == 1 ? groups[0] : b.concat(name + ".im2col", groups, 1);
    y = b.conv(name + ".conv", cols, out_channels, 1, 1, 0, false);
  }
  return b.relu(name + ".relu", b.bn(name + ".bn", y));
}

namespace {
int cbr(GraphBuilder& b, const std::string& name, int x, int64_t out, int k, int stride = 1,
        int pad = 0) {
  return conv_bn_relu(b, name, x, out, k, k, stride, pad, pad);
}
int conv_1x7(GraphBuilder& b, const std::string& name, int x, int64_t out, int n) {
  return conv_bn_relu(b, name, x, out, 1, n, 1, 0, n / 2);
}
int conv_7x1(GraphBuilder& b, const std::string& name, int x, int64_t out, int n) {
  return conv_bn_relu(b, name, x, out, n, 1, 1, n / 2, 0);
}

int inception_a(GraphBuilder& b, int x, int64_t pool_features) {
  int b1 = cbr(b, "branch1x1", x, 64, 1);
  int b5 = cbr(b, "branch5x5_2", cbr(b, "branch5x5_1", x, 48, 1), 64, 5, 1, 2);
  int b3 = cbr(b, "branch3x3dbl_1", x, 64, 1);
  b3 = cbr(b, "branch3x3dbl_3", cbr(b, "branch3x3dbl_2", b3, 96, 3, 1, 1), 96, 3, 1, 1);
  int bp = cbr(b, "branch_pool", b.pool("avg_pool", x, PoolFn::avg, 3, 1, 1), pool_features, 1);
  return b.concat("concat", {b1, b5, b3, bp}, 1);
}

int inception_b(GraphBuilder& b, int x) {
  int b3 = cbr(b, "branch3x3", x, 384, 3, 2);
  int bd = cbr(b, "branch3x3dbl_1", x, 64, 1);
  bd = cbr(b, "branch3x3dbl_3", cbr(b, "branch3x3dbl_2", bd, 96, 3, 1, 1), 96, 3, 2);
  int bp = b.pool("max_pool", x, PoolFn::max, 3, 2, 0);
  return b.concat("concat", {b3, bd, bp}, 1);
}

int inception_c(GraphBuilder& b, int x, int64_t c7) {
  int b1 = cbr(b, "branch1x1", x, 192, 1);
  int b7 = cbr(b, "branch7x7_1", x, c7, 1);
  b7 = conv_7x1(b, "branch7x7_3", conv_1x7(b, "branch7x7_2", b7, c7, 7), 192, 7);
  int bd = cbr(b, "branch7x7dbl_1", x, c7, 1);
  bd = conv_1x7(b, "branch7x7dbl_3", conv_7x1(b, "branch7x7dbl_2", bd, c7, 7), c7, 7);
  bd = conv_1x7(b, "branch7x7dbl_5", conv_7x1(b, "branch7x7dbl_4", bd, c7, 7), 192, 7);
  int bp = cbr(b, "branch_pool", b.pool("avg_pool", x, PoolFn::avg, 3, 1, 1), 192, 1);
  return b.concat("concat", {b1, b7, bd, bp}, 1);
}

int inception_d(GraphBuilder& b, int x) {
  int b3 = cbr(b, "branch3x3_2", cbr(b, "branch3x3_1", x, 192, 1), 320, 3, 2);
  int b7 = cbr(b, "branch7x7x3_1", x, 192, 1);
  b7 = conv_7x1(b, "branch7x7x3_3", conv_1x7(b, "branch7x7x3_2", b7, 192, 7), 192, 7);
  b7 = cbr(b, "branch7x7x3_4", b7, 192, 3, 2);
  int bp = b.pool("max_pool", x, PoolFn::max, 3, 2, 0);
  return b.concat("concat", {b3, b7, bp}, 1);
}

int inception_e(GraphBuilder& b, int x) {
  int b1 = cbr(b, "branch1x1", x, 320, 1);
  int b3 = cbr(b, "branch3x3_1", x, 384, 1);
  b3 = b.concat("branch3x3.concat",
                {conv_1x7(b, "branch3x3_2a", b3, 384, 3), conv_7x1(b, "branch3x3_2b", b3, 384, 3)},
                1);
  int bd = cbr(b, "branch3x3dbl_2", cbr(b, "branch3x3dbl_1", x, 448, 1), 384, 3, 1, 1);
  bd = b.concat(
      "branch3x3dbl.concat",
      {conv_1x7(b, "branch3x3dbl_3a", bd, 384, 3), conv_7x1(b, "branch3x3dbl_3b", bd, 384, 3)}, 1);
  int bp = cbr(b, "branch_pool", b.pool("avg_pool", x, PoolFn::avg, 3, 1, 1), 192, 1);
  return b.concat("concat", {b1, b3, bd, bp}, 1);
}

Graph build(const Knobs& k) {
  int64_t batch = k.get_int("batch"), image = k.get_int("image", 75);
  int64_t classes = k.get_int("classes");
  DType dtype = model_dtype(k);
  GraphBuilder b("inception_v3", "zoo:inception_v3", batch, dtype);
  int h = b.input("images", {batch, 3, image, image}, dtype);
  int labels = b.input("labels", {batch}, DType::int64);
  h = cbr(b, "Conv2d_1a_3x3", h, 32, 3, 2);
  h = cbr(b, "Conv2d_2a_3x3", h, 32, 3);
  h = cbr(b, "Conv2d_2b_3x3", h, 64, 3, 1, 1);
  h = b.pool("maxpool1", h, PoolFn::max, 3, 2, 0);
  h = cbr(b, "Conv2d_3b_1x1", h, 80, 1);
  h = cbr(b, "Conv2d_4a_3x3", h, 192, 3);
  h = b.pool("maxpool2", h, PoolFn::max, 3, 2, 0);
  auto mixed = [&](const char* name, auto&& block) {
    b.begin_block(name);
    h = block();
    b.end_block();
  };
  mixed("Mixed_5b", [&] { return inception_a(b, h, 32); });
  mixed("Mixed_5c", [&] { return inception_a(b, h, 64); });
  mixed("Mixed_5d", [&] { return inception_a(b, h, 64); });
  mixed("Mixed_6a", [&] { return inception_b(b, h); });
  mixed("Mixed_6b", [&] { return inception_c(b, h, 128); });
  mixed("Mixed_6c", [&] { return inception_c(b, h, 160); });
  mixed("Mixed_6d", [&] { return inception_c(b, h, 160); });
  mixed("Mixed_6e", [&] { return inception_c(b, h, 192); });
  mixed("Mixed_7a", [&] { return inception_d(b, h); });
  mixed("Mixed_7b", [&] { return inception_e(b, h); });
  mixed("Mixed_7c", [&] { return inception_e(b, h); });
  h = b.global_avg_pool("avgpool", h);
  h = b.dropout("dropout", b.reshape("flatten", h, {batch, b.shape(h)[1]}));
  h = b.linear("fc", h, classes);
  b.cross_entropy("loss", h, labels);
  return b.finish();
}
}  // namespace

ZooModel inception_v3_model() {
  std::vector<KnobSpec> knobs = image_classifier_knobs();
  for (KnobSpec& spec : knobs) {
    if (spec.name == "image") spec = {"image", "299", "image height and width (>= 75)"};
  }
  return {"inception_v3",
          "Inception-v3 (torchvision layout, no aux classifier), NCHW images, BatchNorm",
          knobs, build};
}

}  // namespace autoddl::costmodel::zoo
