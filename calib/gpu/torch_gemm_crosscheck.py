#!/usr/bin/env python3
"""torch_gemm_crosscheck.py OUT.json: PyTorch's GEMMs on the training shapes the presets cite.

A cross-check of gemm_cublaslt (which sweeps a power-of-two grid) on the shapes the dgx-h100
preset's matmul_efficiency cites: Meta's Llama-70B training GEMMs as SemiAnalysis timed them
(M x N x K 16384x8192x1280, 16384x1024x8192, 16384x8192x7168, 16384x3584x8192, 8192^3), plus
4096^3. bf16 through torch.matmul, and FP8 E4M3 through torch._scaled_mm (cuBLASLt, unit scales,
bf16 output) with and without fast accumulation, as Transformer Engine runs its forward (fast)
and backward (full-precision accumulation) GEMMs. Timing as SemiAnalysis did: triton's do_bench
(CUDA events, L2 cleared before each repetition), the median; inputs from N(0, 1), fresh per
shape. Needs a CUDA GPU, torch and triton (the GPU machine's image has both).
"""
import json
import sys

import torch
from triton.testing import do_bench

from torch_fp8 import fp8_gemm

SHAPES = [(16384, 8192, 1280), (16384, 1024, 8192), (16384, 8192, 7168), (16384, 3584, 8192),
          (8192, 8192, 8192), (4096, 4096, 4096)]


def median_ms(fn):
    return do_bench(fn, warmup=30, rep=200, return_mode="median")


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else "torch_gemm_crosscheck.json"
    dev = torch.cuda.get_device_properties(0)
    rows = []
    print(f"# {dev.name}, torch {torch.__version__}, CUDA {torch.version.cuda}")
    print(f"# {'M':>6} {'N':>6} {'K':>6}  {'dtype':<14} {'ms':>9} {'TFLOP/s':>8}")
    for m, n, k in SHAPES:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        flops = 2.0 * m * n * k
        cases = [("bf16", lambda: a @ b)]
        mm8 = fp8_gemm(a, b)
        for fast in (False, True):
            cases.append(("fp8_fast_accum" if fast else "fp8", lambda fast=fast: mm8(fast)))
        ref = (a.double() @ b.double())
        for name, fn in cases:
            got = fn().double()
            rel = (torch.linalg.norm(got - ref) / torch.linalg.norm(ref)).item()
            ms = median_ms(fn)
            rows.append({"m": m, "n": n, "k": k, "dtype": name, "median_ms": ms,
                         "tflops": flops / (ms * 1e-3) / 1e12, "rel_error_vs_fp64": rel})
            print(f"  {m:>6} {n:>6} {k:>6}  {name:<14} {ms:9.4f} {rows[-1]['tflops']:8.1f}  rel err {rel:.1e}")
        del a, b, mm8, ref
        torch.cuda.empty_cache()
    with open(out_path, "w") as f:
        json.dump({"format": "autoddl-torch-gemm-crosscheck/1", "gpu": dev.name,
                   "torch": torch.__version__, "cuda": torch.version.cuda,
                   "timing": "triton.testing.do_bench(warmup=30 ms, rep=200 ms), median",
                   "rows": rows}, f, indent=1)
    print(f"# wrote {out_path}")


if __name__ == "__main__":
    main()
