# The calibration microbenchmarks, listed once, in the order `autoddl calibrate` runs them (cheap
# ones first). A row is program|needs|what:
#   program  calib/gpu/<program>.cu, built into build/calib/gpu/<program> (calib/gpu/CMakeLists.txt)
#   needs    the library it links besides the harness: - (none), cublasLt, cudnn or nccl; a row
#            whose library is not found is not built. nccl programs run once per group size.
#   what     the line `autoddl calibrate` prints (calib/src/calibrate_plan.cpp gets these rows).
set(AUTODDL_CALIB_BENCHMARKS
  "hbm_copy|-|HBM copy / scale / triad bandwidth and launch overhead"
  "gemm_cublaslt|cublasLt|cuBLASLt GEMM over an (M, N, K) grid, fp32 / fp16 / bf16 (and fp8 from sm_89)"
  "conv_cudnn|cudnn|cuDNN convolution, VGG-16 and ResNet-50 layers"
  "nccl_all_reduce|nccl|NCCL all-reduce, 8 B to 1 GiB"
  "nccl_all_gather|nccl|NCCL all-gather, 8 B to 1 GiB"
  "nccl_reduce_scatter|nccl|NCCL reduce-scatter, 8 B to 1 GiB"
  "nccl_all_to_all|nccl|NCCL all-to-all, 8 B to 1 GiB"
  "nccl_send_recv|nccl|NCCL send/recv ring, 8 B to 1 GiB"
)
