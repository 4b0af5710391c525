// conv_cudnn: cuDNN forward convolution for the model zoo's conv layers (VGG-16 at 224², and
// ResNet-50 v1.5 with its stride on the 3×3), batch --batch, fp32 (NCHW) and fp16 / bf16 (NHWC,
// tensor-op math, fp32 accumulation). Math types as PyTorch sets them (ATen's cuDNN convolution
// descriptor): fp32 CUDNN_DEFAULT_MATH, which lets cuDNN use TF32 tensor cores on sm_80+
// (torch.backends.cudnn.allow_tf32 defaults to True), or with --no-tf32 CUDNN_FMA_MATH (issue 16,
// defect 9). The algorithm is the fastest one cudnnFindConvolutionForwardAlgorithmEx reports
// within a 256 MiB workspace, as frameworks do with benchmark mode on, and the math type it
// reports is set on the descriptor before timing and written in the row (`math`, `tf32`).
// FLOPs = 2·N·K·P·Q·C·R·S. Feeds the calibration's conv efficiency table.
#include <cudnn.h>

#include <memory>

#include "harness.hpp"

namespace autoddl::calib::gpu {
template <>
struct Status<cudnnStatus_t> {
  static bool ok(cudnnStatus_t s) { return s == CUDNN_STATUS_SUCCESS; }
  static std::string text(cudnnStatus_t s) { return cudnnGetErrorString(s); }
};
}  // namespace autoddl::calib::gpu

using namespace autoddl::calib::gpu;

namespace {

constexpr size_t kWorkspaceBytes = 256u << 20;

struct ConvShape {
  const char* layer;
  int c, k, hw, rs, stride, pad;
};

// Distinct layer shapes (repeated layers measured once).
constexpr ConvShape kShapes[] = {
    {"vgg16.conv1_1", 3, 64, 224, 3, 1, 1},       {"vgg16.conv1_2", 64, 64, 224, 3, 1, 1},
    {"vgg16.conv2_1", 64, 128, 112, 3, 1, 1},     {"vgg16.conv2_2", 128, 128, 112, 3, 1, 1},
    {"vgg16.conv3_1", 128, 256, 56, 3, 1, 1},     {"vgg16.conv3_2", 256, 256, 56, 3, 1, 1},
    {"vgg16.conv4_1", 256, 512, 28, 3, 1, 1},     {"vgg16.conv4_2", 512, 512, 28, 3, 1, 1},
    {"vgg16.conv5_1", 512, 512, 14, 3, 1, 1},
    {"resnet50.conv1", 3, 64, 224, 7, 2, 3},
    {"resnet50.res2.reduce", 64, 64, 56, 1, 1, 0},   {"resnet50.res2.conv3x3", 64, 64, 56, 3, 1, 1},
    {"resnet50.res2.expand", 64, 256, 56, 1, 1, 0},  {"resnet50.res2.reduce_in", 256, 64, 56, 1, 1, 0},
    {"resnet50.res3.reduce_first", 256, 128, 56, 1, 1, 0},
    {"resnet50.res3.conv3x3_s2", 128, 128, 56, 3, 2, 1}, {"resnet50.res3.conv3x3", 128, 128, 28, 3, 1, 1},
    {"resnet50.res3.expand", 128, 512, 28, 1, 1, 0}, {"resnet50.res3.reduce_in", 512, 128, 28, 1, 1, 0},
    {"resnet50.res3.proj", 256, 512, 56, 1, 2, 0},
    {"resnet50.res4.reduce_first", 512, 256, 28, 1, 1, 0},
    {"resnet50.res4.conv3x3_s2", 256, 256, 28, 3, 2, 1}, {"resnet50.res4.conv3x3", 256, 256, 14, 3, 1, 1},
    {"resnet50.res4.expand", 256, 1024, 14, 1, 1, 0}, {"resnet50.res4.reduce_in", 1024, 256, 14, 1, 1, 0},
    {"resnet50.res4.proj", 512, 1024, 28, 1, 2, 0},
    {"resnet50.res5.reduce_first", 1024, 512, 14, 1, 1, 0},
    {"resnet50.res5.conv3x3_s2", 512, 512, 14, 3, 2, 1}, {"resnet50.res5.conv3x3", 512, 512, 7, 3, 1, 1},
    {"resnet50.res5.expand", 512, 2048, 7, 1, 1, 0}, {"resnet50.res5.reduce_in", 2048, 512, 7, 1, 1, 0},
    {"resnet50.res5.proj", 1024, 2048, 14, 1, 2, 0},
};

const char* math_name(cudnnMathType_t m) {
  switch (m) {
    case CUDNN_DEFAULT_MATH: return "default";
    case CUDNN_TENSOR_OP_MATH: return "tensor_op";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return "tensor_op_allow_conversion";
    case CUDNN_FMA_MATH: return "fma";
    default: return "unknown";
  }
}

cudnnDataType_t cudnn_type(const std::string& dtype) {
  return dtype == "fp32" ? CUDNN_DATA_FLOAT : dtype == "fp16" ? CUDNN_DATA_HALF : CUDNN_DATA_BFLOAT16;
}

// Descriptors of one convolution; destroyed with it.
struct Conv {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  int n = 0, k = 0, p = 0, q = 0;

  Conv(int batch, const ConvShape& s, const std::string& dtype, bool tf32) {
    cudnnDataType_t t = cudnn_type(dtype);
    cudnnTensorFormat_t f = dtype == "fp32" ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC;
    CALIB_CHECK(cudnnCreateTensorDescriptor(&x));
    CALIB_CHECK(cudnnCreateTensorDescriptor(&y));
    CALIB_CHECK(cudnnCreateFilterDescriptor(&w));
    CALIB_CHECK(cudnnCreateConvolutionDescriptor(&conv));
    CALIB_CHECK(cudnnSetTensor4dDescriptor(x, f, t, batch, s.c, s.hw, s.hw));
    CALIB_CHECK(cudnnSetFilter4dDescriptor(w, t, f, s.k, s.c, s.rs, s.rs));
    CALIB_CHECK(cudnnSetConvolution2dDescriptor(conv, s.pad, s.pad, s.stride, s.stride, 1, 1,
                                                CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    const cudnnMathType_t math = dtype != "fp32" ? CUDNN_TENSOR_OP_MATH : tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
    CALIB_CHECK(cudnnSetConvolutionMathType(conv, math));
    CALIB_CHECK(cudnnGetConvolution2dForwardOutputDim(conv, x, w, &n, &k, &p, &q));
    CALIB_CHECK(cudnnSetTensor4dDescriptor(y, f, t, n, k, p, q));
  }
  ~Conv() {
    if (conv) cudnnDestroyConvolutionDescriptor(conv);
    if (w) cudnnDestroyFilterDescriptor(w);
    if (y) cudnnDestroyTensorDescriptor(y);
    if (x) cudnnDestroyTensorDescriptor(x);
  }
};

}  // namespace

int main(int argc, char** argv) {
  BenchInfo info{"conv_cudnn", "cuDNN forward convolution on VGG-16 and ResNet-50 layer shapes"};
  return run_main(argc, argv, info, [](const Options& opt, Report& report) {
    report.version("cudnn", std::to_string(cudnnGetVersion()));
    int dev = 0;
    CALIB_CHECK(cudaSetDevice(dev));
    cudaStream_t s;
    CALIB_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudnnHandle_t h;
    CALIB_CHECK(cudnnCreate(&h));
    CALIB_CHECK(cudnnSetStream(h, s));
    void* workspace;
    CALIB_CHECK(cudaMalloc(&workspace, kWorkspaceBytes));
    int batch = opt.quick ? std::min(opt.batch, 8) : opt.batch;
    const float alpha = 1, beta = 0;

    for (const std::string& dtype : opt.dtypes) {
      for (const ConvShape& shape : kShapes) {
        // A layout / dtype cuDNN does not support is a skipped row, not an abort; its legacy
        // convolution API has no FP8 forward at all.
        std::unique_ptr<Conv> cp;
        std::string why;
        if (dtype == "fp8" || dtype == "mxfp8" || dtype == "nvfp4") {
          why = "conv_cudnn measures fp32 / fp16 / bf16; FP8 and FP4 convolution is not a cuDNN forward algorithm";
        } else {
          try {
            cp = std::make_unique<Conv>(batch, shape, dtype, opt.tf32);
          } catch (const CalibError& err) {
            why = err.what();
          }
        }
        if (!why.empty()) {
          Row r;
          r.name = "conv";
          r.dtype = dtype;
          r.tags = {{"layer", shape.layer}};
          report.skip(r, why);
          continue;
        }
        const Conv& c = *cp;
        size_t e = dtype_size(dtype);
        size_t nx = size_t(batch) * shape.c * shape.hw * shape.hw;
        size_t nw = size_t(shape.k) * shape.c * shape.rs * shape.rs;
        size_t ny = size_t(c.n) * c.k * c.p * c.q;
        Row r;
        r.name = "conv";
        r.dtype = dtype;
        r.count = static_cast<int64_t>(ny);
        r.flops = 2.0 * ny * shape.c * shape.rs * shape.rs;
        r.size_bytes = double(e) * (nx + nw + ny);
        r.shape = {{"n", double(batch)}, {"c", double(shape.c)}, {"h", double(shape.hw)},
                   {"w", double(shape.hw)}, {"k", double(shape.k)}, {"r", double(shape.rs)},
                   {"s", double(shape.rs)}, {"stride", double(shape.stride)}, {"pad", double(shape.pad)}};
        r.tags = {{"layer", shape.layer}};
        if (dtype == "fp32") r.tags.push_back({"tf32", opt.tf32 ? "allowed" : "off"});

        void *x, *w, *y;
        CALIB_CHECK(cudaMalloc(&x, nx * e));
        CALIB_CHECK(cudaMalloc(&w, nw * e));
        CALIB_CHECK(cudaMalloc(&y, ny * e));
        fill_random(x, nx, dtype, 21, s);
        fill_random(w, nw, dtype, 22, s);
        CALIB_CHECK(cudaStreamSynchronize(s));

        cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        int returned = 0;
        cudnnStatus_t found = cudnnFindConvolutionForwardAlgorithmEx(
            h, c.x, x, c.w, w, c.conv, c.y, y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf,
            workspace, kWorkspaceBytes);
        const cudnnConvolutionFwdAlgoPerf_t* best = nullptr;
        for (int i = 0; found == CUDNN_STATUS_SUCCESS && i < returned && !best; ++i) {
          if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= kWorkspaceBytes) best = &perf[i];
        }
        if (found != CUDNN_STATUS_SUCCESS) {
          report.skip(r, std::string("cudnnFindConvolutionForwardAlgorithmEx: ") + cudnnGetErrorString(found));
        } else if (!best) {
          report.skip(r, "cuDNN has no forward algorithm for this shape within 256 MiB workspace");
        } else {
          cudnnConvolutionFwdAlgo_t algo = best->algo;
          size_t ws = best->memory;
          // The math type Find timed this algorithm with; run it the same way.
          CALIB_CHECK(cudnnSetConvolutionMathType(c.conv, best->mathType));
          r.tags.push_back({"math", math_name(best->mathType)});
          Timed t = time_op(opt, {dev}, {s}, [&] {
            CALIB_CHECK(cudnnConvolutionForward(h, &alpha, c.x, x, c.w, w, c.conv, algo, workspace, ws,
                                                &beta, c.y, y));
          });
          r.time_us = t.time_us;
          r.kernel_us = t.kernel_us;
          r.shape.push_back({"algo", double(algo)});
          report.add(r);
        }
        CALIB_CHECK(cudaFree(x));
        CALIB_CHECK(cudaFree(w));
        CALIB_CHECK(cudaFree(y));
      }
    }
    CALIB_CHECK(cudaFree(workspace));
    CALIB_CHECK(cudnnDestroy(h));
    CALIB_CHECK(cudaStreamDestroy(s));
  });
}
