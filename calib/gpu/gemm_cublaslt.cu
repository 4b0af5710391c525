// gemm_cublaslt: cuBLASLt D = A·B over a grid of (M, N, K) and dtypes fp32 / fp16 / bf16 / fp8
// (column-major, β = 0, fp32 accumulation, cuBLASLt's first heuristic algorithm and a 32 MiB
// workspace). fp32 is plain FP32, not TF32; fp32 / fp16 / bf16 are untransposed (NN). fp8 is how
// Transformer Engine runs its GEMMs on Hopper: E4M3 A and B in the TN layout cuBLASLt requires for
// FP8, bf16 C and D, unit scales; accumulation in full precision (TE's dgrad and wgrad) unless
// --fp8-fast-accum (TE's fprop). FLOPs = 2·M·N·K; bytes = the three matrices once. Feeds the
// calibration's matmul efficiency tables (matmul_efficiency, matmul_efficiency_fp8).
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

cudaDataType_t cuda_type(const std::string& dtype) {
  return dtype == "fp32" ? CUDA_R_32F : dtype == "fp16" ? CUDA_R_16F : dtype == "fp8" ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
}
// C and D are of the operands' dtype, except that FP8 GEMMs write bf16 (as Transformer Engine's).
std::string output_dtype(const std::string& dtype) { return dtype == "fp8" ? "bf16" : dtype; }

// One GEMM's descriptors and algorithm; skipped (with why) if cuBLASLt has none for it.
struct Gemm {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulHeuristicResult_t algo{};
  bool found = false;

  Gemm(cublasLtHandle_t h, int64_t m, int64_t n, int64_t k, const std::string& dtype, bool fast_accum) {
    cudaDataType_t t = cuda_type(dtype);
    CALIB_CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    if (dtype == "fp8") {  // cuBLASLt's FP8 GEMMs take A transposed (stored K x M) and B as is
      cublasOperation_t transpose = CUBLAS_OP_T;
      CALIB_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof transpose));
      int8_t fast = fast_accum ? 1 : 0;
      CALIB_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
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
  BenchInfo info{"gemm_cublaslt", "cuBLASLt GEMM over an (M, N, K) grid in fp32 / fp16 / bf16 / fp8"};
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
    std::vector<std::string> dtypes = opt.dtypes;
    if (!opt.dtypes_given && has_fp8) dtypes.push_back("fp8");

    std::vector<int64_t> dims = opt.dims.empty() ? default_dims(opt.quick) : opt.dims;
    int64_t dmax = *std::max_element(dims.begin(), dims.end());
    size_t max_elems = size_t(dmax) * size_t(dmax);
    void *a, *b, *c;  // sized for the largest square operand; every grid point fits
    CALIB_CHECK(cudaMalloc(&a, max_elems * 4));
    CALIB_CHECK(cudaMalloc(&b, max_elems * 4));
    CALIB_CHECK(cudaMalloc(&c, max_elems * 4));
    const float alpha = 1, beta = 0;

    for (const std::string& dtype : dtypes) {
      if (dtype == "fp8" && !has_fp8) {
        Row r;
        r.name = "gemm";
        r.dtype = dtype;
        report.skip(r, "FP8 GEMMs need compute capability 8.9 or newer; this GPU is " +
                           std::to_string(prop.major) + "." + std::to_string(prop.minor));
        continue;
      }
      fill_random(a, max_elems, dtype, 11, s);
      fill_random(b, max_elems, dtype, 12, s);
      const std::string out = output_dtype(dtype);
      std::vector<std::pair<std::string, std::string>> tags;  // fp8's layout and accumulation
      if (dtype == "fp8") tags = {{"layout", "TN"}, {"output", out}, {"fast_accum", opt.fp8_fast_accum ? "on" : "off"}};
      for (int64_t m : dims) {
        for (int64_t n : dims) {
          for (int64_t k : dims) {
            Row r;
            r.name = "gemm";
            r.dtype = dtype;
            r.count = m * n;
            r.flops = 2.0 * m * n * k;
            r.size_bytes = double(dtype_size(dtype)) * (m * k + k * n) + double(dtype_size(out)) * (m * n);
            r.shape = {{"m", double(m)}, {"n", double(n)}, {"k", double(k)}};
            r.tags = tags;
            Gemm g(h, m, n, k, dtype, opt.fp8_fast_accum);
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
    CALIB_CHECK(cudaFree(workspace));
    CALIB_CHECK(cublasLtDestroy(h));
    CALIB_CHECK(cudaStreamDestroy(s));
  });
}
