"""torch_fp8.py: the FP8 GEMM the PyTorch cross-checks time, one definition for all of them.

Transformer Engine's FP8 GEMM on Hopper: E4M3 operands in cuBLASLt's TN layout (torch._scaled_mm
wants A row-major and B column-major), unit scales, bf16 output, with or without cuBLASLt's fast
accumulation (TE's forward GEMM uses it, its dgrad and wgrad do not).
"""
import torch


def fp8_gemm(a, b):
    """fast -> a @ b in FP8, for bf16 a (M, K) and b (K, N); the casts are done once, here."""
    a8 = a.to(torch.float8_e4m3fn)
    b8 = b.t().contiguous().to(torch.float8_e4m3fn).t()
    one = torch.ones((), device=a.device, dtype=torch.float32)
    return lambda fast: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                         use_fast_accum=fast)
