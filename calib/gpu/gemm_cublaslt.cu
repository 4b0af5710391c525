// gemm_cublaslt: cuBLASLt D = A·B over a grid of (M, N, K) and dtypes fp32 / fp16 / bf16 / fp8 /
// mxfp8 / nvfp4 (column-major, β = 0, fp32 accumulation, cuBLASLt's first heuristic algorithm and
// a 32 MiB workspace). fp32 is plain FP32, not TF32; fp32 / fp16 / bf16 are untransposed (NN). fp8
// is how Transformer Engine runs its GEMMs on Hopper: E4M3 A and B in the TN layout cuBLASLt
// requires for FP8, bf16 C and D, unit scales; accumulation in full precision (TE's dgrad and
// wgrad) unless --fp8-fast-accum (TE's fprop). mxfp8 and nvfp4 are Blackwell's block-scaled
// formats as Transformer Engine's MXFP8BlockScaling and NVFP4BlockScaling recipes run them: E4M3
// (mxfp8) or E2M1 (nvfp4) A and B in the TN layout with one scale per 32 (UE8M0) or 16 (UE4M3)
// elements along K (cuBLASLt's VEC32_UE8M0 / VEC16_UE4M3 scale modes; every scale 1, so their
// swizzled layout does not matter), bf16 C and D. FLOPs = 2·M·N·K; bytes = the three matrices once
// (the scales left out). Feeds the calibration's matmul efficiency tables (matmul_efficiency,
// matmul_efficiency_fp8; the block-scaled rows wait for their tables: `autoddl fit` notes them).
#include <cublasLt.h>

#include "harness.hpp"

namespace autoddl::calib::gpu {
template <>
struct Status<cublasStatus_t> {
  static bool ok(cublasStatus_t s) { return s == CUBLAS_STATUS_SUCCESS; }
  static std::string text(cublasStatus_t s) {
    return std::string(cublasLtGetStatusString(s)) + " (" + cublasLtGetStatusName(s) + ")";
  }
};
}  // namespace autoddl::calib::gpu

using namespace autoddl::calib::gpu;

namespace {

constexpr size_t kWorkspaceBytes = 32u << 20;

bool block_scaled(const std::string& dtype) { return dtype == "mxfp8" || dtype == "nvfp4"; }
bool low_precision(const std::string& dtype) { return dtype == "fp8" || block_scaled(dtype); }

cudaDataType_t cuda_type(const std::string& dtype) {
  if (dtype == "nvfp4") return CUDA_R_4F_E2M1;
  if (dtype == "fp8" || dtype == "mxfp8") return CUDA_R_8F_E4M3;
  return dtype == "fp32" ? CUDA_R_32F : dtype == "fp16" ? CUDA_R_16F : CUDA_R_16BF;
}
// C and D are of the operands' dtype, except that FP8 and FP4 GEMMs write bf16 (as Transformer
// Engine's).
std::string output_dtype(const std::string& dtype) { return low_precision(dtype) ? "bf16" : dtype; }
// Bytes per element of an operand (E2M1: two per byte).
double operand_bytes(const std::string& dtype) { return dtype == "nvfp4" ? 0.5 : double(dtype_size(dtype)); }

// Block-scaled formats: elements per scale along K, the scale's cuBLASLt mode, and the byte that
// encodes 1.0 (UE8M0: exponent 127; UE4M3: 0x38).
struct BlockScale {
  int block = 0;
  int32_t mode = 0;
  unsigned char one = 0;
};
BlockScale block_scale(const std::string& dtype) {
  if (dtype == "mxfp8") return {32, CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0, 127};
  if (dtype == "nvfp4") return {16, CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3, 0x38};
  return {};
}
// Scale bytes of a K x rows operand, padded as cuBLASLt's swizzled scale layout tiles it (128
// rows by 4 scale columns).
size_t scale_bytes(int64_t rows, int64_t k, int block) {
  const int64_t cols = (k + block - 1) / block;
  return size_t((rows + 127) / 128 * 128) * size_t((cols + 3) / 4 * 4);
}

// One GEMM's descriptors and algorithm; skipped (with why) if cuBLASLt has none for it.
struct Gemm {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulHeuristicResult_t algo{};
  bool found = false;

  // scale_a, scale_b: block-scaled formats' scale tensors (device, every scale 1); else null.
  Gemm(cublasLtHandle_t h, int64_t m, int64_t n, int64_t k, const std::string& dtype, bool fast_accum,
       const void* scale_a = nullptr, const void* scale_b = nullptr) {
    cudaDataType_t t = cuda_type(dtype);
    CALIB_CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    if (low_precision(dtype)) {  // cuBLASLt's FP8/FP4 GEMMs take A transposed (stored K x M) and B as is
      cublasOperation_t transpose = CUBLAS_OP_T;
      CALIB_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof transpose));
      if (dtype == "fp8") {
        int8_t fast = fast_accum ? 1 : 0;
        CALIB_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
      } else {
        const int32_t mode = block_scale(dtype).mode;
        CALIB_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode, sizeof mode));
        CALIB_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode, sizeof mode));
        CALIB_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_a, sizeof scale_a));
        CALIB_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale_b, sizeof scale_b));
      }
      CALIB_CHECK(cublasLtMatrixLayoutCreate(&a, t, k, m, k));
    } else {
      CALIB_CHECK(cublasLtMatrixLayoutCreate(&a, t, m, k, m));
    }
    CALIB_CHECK(cublasLtMatrixLayoutCreate(&b, t, k, n, k));
    CALIB_CHECK(cublasLtMatrixLayoutCreate(&c, cuda_type(output_dtype(dtype)), m, n, m));
    cublasLtMatmulPreference_t pref;
    CALIB_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    size_t ws = kWorkspaceBytes;
    CALIB_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    int returned = 0;
    cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(h, op, a, b, c, c, pref, 1, &algo, &returned);
    found = st == CUBLAS_STATUS_SUCCESS && returned > 0;
    CALIB_CHECK(cublasLtMatmulPreferenceDestroy(pref));
  }
  ~Gemm() {
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

std::vector<int64_t> default_dims(bool quick) {
  if (quick) return {256, 1024, 4096};
  return {128, 256, 512, 1024, 2048, 4096, 8192};
}

}  // namespace

int main(int argc, char** argv) {
  BenchInfo info{"gemm_cublaslt", "cuBLASLt GEMM over an (M, N, K) grid in fp32 / fp16 / bf16 / fp8 / mxfp8 / nvfp4"};
  return run_main(argc, argv, info, [](const Options& opt, Report& report) {
    report.version("cublasLt", std::to_string(cublasLtGetVersion()));
    int dev = 0;
    CALIB_CHECK(cudaSetDevice(dev));
    cudaStream_t s;
    CALIB_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cublasLtHandle_t h;
    CALIB_CHECK(cublasLtCreate(&h));
    void* workspace;
    CALIB_CHECK(cudaMalloc(&workspace, kWorkspaceBytes));

    // FP8 tensor cores exist from compute capability 8.9 (Ada, Hopper): there fp8 joins the
    // default dtypes (so `autoddl calibrate` measures it); below, an fp8 request is one skipped row.
    cudaDeviceProp prop;
    CALIB_CHECK(cudaGetDeviceProperties(&prop, dev));
    const bool has_fp8 = prop.major * 10 + prop.minor >= 89;
    // Block-scaled FP8 and FP4 tensor cores from compute capability 10.0 (Blackwell): there they
    // join the defaults too.
    const bool has_block_scaled = prop.major >= 10;
    std::vector<std::string> dtypes = opt.dtypes;
    if (!opt.dtypes_given && has_fp8) dtypes.push_back("fp8");
    if (!opt.dtypes_given && has_block_scaled) {
      dtypes.push_back("mxfp8");
      dtypes.push_back("nvfp4");
    }

    std::vector<int64_t> dims = opt.dims.empty() ? default_dims(opt.quick) : opt.dims;
    int64_t dmax = *std::max_element(dims.begin(), dims.end());
    size_t max_elems = size_t(dmax) * size_t(dmax);
    void *a, *b, *c;  // sized for the largest square operand; every grid point fits
    CALIB_CHECK(cudaMalloc(&a, max_elems * 4));
    CALIB_CHECK(cudaMalloc(&b, max_elems * 4));
    CALIB_CHECK(cudaMalloc(&c, max_elems * 4));
    // Block scales of the largest operand at the finest block (16), every one 1.
    const size_t scales = scale_bytes(dmax, dmax, 16);
    void *scale_a, *scale_b;
    CALIB_CHECK(cudaMalloc(&scale_a, scales));
    CALIB_CHECK(cudaMalloc(&scale_b, scales));
    const float alpha = 1, beta = 0;

    for (const std::string& dtype : dtypes) {
      if ((dtype == "fp8" && !has_fp8) || (block_scaled(dtype) && !has_block_scaled)) {
        Row r;
        r.name = "gemm";
        r.dtype = dtype;
        report.skip(r, std::string(dtype == "fp8" ? "FP8 GEMMs need compute capability 8.9"
                                                  : "block-scaled GEMMs (MXFP8, NVFP4) need compute capability 10.0") +
                           " or newer; this GPU is " + std::to_string(prop.major) + "." + std::to_string(prop.minor));
        continue;
      }
      fill_random(a, max_elems, dtype, 11, s);
      fill_random(b, max_elems, dtype, 12, s);
      if (block_scaled(dtype)) {
        CALIB_CHECK(cudaMemsetAsync(scale_a, block_scale(dtype).one, scales, s));
        CALIB_CHECK(cudaMemsetAsync(scale_b, block_scale(dtype).one, scales, s));
      }
      const std::string out = output_dtype(dtype);
      std::vector<std::pair<std::string, std::string>> tags;  // the low-precision layout, accumulation, scaling
      if (dtype == "fp8") tags = {{"layout", "TN"}, {"output", out}, {"fast_accum", opt.fp8_fast_accum ? "on" : "off"}};
      if (block_scaled(dtype)) {
        tags = {{"layout", "TN"}, {"output", out}, {"scale_block", std::to_string(block_scale(dtype).block)}};
      }
      for (int64_t m : dims) {
        for (int64_t n : dims) {
          for (int64_t k : dims) {
            Row r;
            r.name = "gemm";
            r.dtype = dtype;
            r.count = m * n;
            r.flops = 2.0 * m * n * k;
            r.size_bytes = operand_bytes(dtype) * double(m * k + k * n) + double(dtype_size(out)) * double(m * n);
            r.shape = {{"m", double(m)}, {"n", double(n)}, {"k", double(k)}};
            r.tags = tags;
            if (block_scaled(dtype) && k % block_scale(dtype).block != 0) {
              report.skip(r, "K is not a multiple of the format's scale block");
              continue;
            }
            Gemm g(h, m, n, k, dtype, opt.fp8_fast_accum, scale_a, scale_b);
            if (!g.found) {
              report.skip(r, "cuBLASLt has no algorithm for this shape");
              continue;
            }
            Timed t = time_op(opt, {dev}, {s}, [&] {
              CALIB_CHECK(cublasLtMatmul(h, g.op, &alpha, a, g.a, b, g.b, &beta, c, g.c, c, g.c,
                                         &g.algo.algo, workspace, kWorkspaceBytes, s));
            });
            r.time_us = t.time_us;
            r.kernel_us = t.kernel_us;
            report.add(r);
          }
        }
      }
    }
    CALIB_CHECK(cudaFree(a));
    CALIB_CHECK(cudaFree(b));
    CALIB_CHECK(cudaFree(c));
    CALIB_CHECK(cudaFree(scale_a));
    CALIB_CHECK(cudaFree(scale_b));
    CALIB_CHECK(cudaFree(workspace));
    CALIB_CHECK(cublasLtDestroy(h));
    CALIB_CHECK(cudaStreamDestroy(s));
  });
}
