#!/usr/bin/env python3
"""torch_attention_bench.py OUT.json: fused attention on this GPU, as the presets' tables count it.

The dgx-h100 / dgx-h200 presets take attention_efficiency_fwd / _bwd from FlashAttention-3's
Figures 5 and 6 (Shah et al. 2024, the cuDNN bars: bf16, head dim 128, 16 heads, batch x seq =
16k tokens; forward causal, backward without mask). This measures the same grid through
PyTorch's scaled_dot_product_attention with its cuDNN backend (Transformer Engine's choice on
Hopper) and its FlashAttention-2 backend, forward and backward, causal and not, and the exact
attention of the llama validation plan (Llama-2 7B: batch 2, 32 heads, seq 4096, causal).

FLOPs as the FlashAttention benchmarks and autoddl count them: forward 4*b*h*s^2*d, halved when
causal; backward 2.5x the forward. Efficiency = TFLOP/s over the dense BF16 peak given as
--peak (default 989e12, the H100/H200 SXM datasheet). Timing: triton's do_bench (CUDA events,
L2 cleared before each repetition), the median; inputs from N(0, 1).
"""
import argparse
import json

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from triton.testing import do_bench

BACKENDS = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash2": SDPBackend.FLASH_ATTENTION}


def fwd_flops(b, h, s, d, causal):
    return 4.0 * b * h * s * s * d / (2 if causal else 1)


def measure(backend, b, h, s, d, causal):
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
               for _ in range(3))
    with sdpa_kernel(BACKENDS[backend]):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        grad = torch.randn_like(out)
        fwd_ms = do_bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
                          warmup=25, rep=100, return_mode="median")
        bwd_ms = do_bench(lambda: out.backward(grad, retain_graph=True), grad_to_none=[q, k, v],
                          warmup=25, rep=100, return_mode="median")
    return fwd_ms, bwd_ms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--peak", type=float, default=989e12)
    args = ap.parse_args()
    dev = torch.cuda.get_device_properties(0)
    cases = [(16384 // s, 16, s, 128, c, "fa3-grid") for c in (True, False)
             for s in (512, 1024, 2048, 4096, 8192, 16384)]
    cases.append((2, 32, 4096, 128, True, "llama-2-7b plan"))
    # The attention of one micro-batch on one GPU in the published H100 rows (heads / tp;
    # scripts/published-gemm-shapes lists their GEMMs): GPT-3 5B, 20B, 175B, Llama-2 7B / 13B /
    # 70B (its 8 KV heads / tp 4 = 2: grouped-query attention, as repeated KV here).
    cases += [(4, 32, 2048, 128, True, "published GPT3-5B"), (2, 24, 2048, 128, True, "published GPT3-20B"),
              (1, 24, 2048, 128, True, "published GPT3-175B mb1"), (2, 24, 2048, 128, True, "published GPT3-175B mb2"),
              (1, 32, 4096, 128, True, "published Llama-2 7B"), (1, 40, 4096, 128, True, "published Llama-2 13B"),
              (1, 16, 4096, 128, True, "published Llama-2 70B")]
    rows = []
    print(f"# {dev.name}, torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}")
    print(f"# {'backend':<7} {'b':>3} {'h':>3} {'seq':>6} {'causal':<6} {'fwd ms':>8} {'fwd TF':>7} "
          f"{'eff':>5} {'bwd ms':>8} {'bwd TF':>7} {'eff':>5}  case")
    for backend in BACKENDS:
        for b, h, s, d, causal, case in cases:
            try:
                fwd_ms, bwd_ms = measure(backend, b, h, s, d, causal)
            except RuntimeError as e:  # a backend that does not take this shape
                print(f"  {backend:<7} {b:>3} {h:>3} {s:>6} {str(causal):<6} skipped: {str(e)[:120]}")
                rows.append({"backend": backend, "b": b, "h": h, "seq": s, "d": d, "causal": causal,
                             "case": case, "skipped": str(e)[:400]})
                continue
            f = fwd_flops(b, h, s, d, causal)
            fwd_tf, bwd_tf = f / fwd_ms / 1e9, 2.5 * f / bwd_ms / 1e9
            rows.append({"backend": backend, "b": b, "h": h, "seq": s, "d": d, "causal": causal,
                         "case": case, "fwd_ms": fwd_ms, "bwd_ms": bwd_ms, "fwd_flops": f,
                         "bwd_flops": 2.5 * f, "fwd_tflops": fwd_tf, "bwd_tflops": bwd_tf,
                         "fwd_efficiency": fwd_tf * 1e12 / args.peak,
                         "bwd_efficiency": bwd_tf * 1e12 / args.peak})
            print(f"  {backend:<7} {b:>3} {h:>3} {s:>6} {str(causal):<6} {fwd_ms:8.3f} {fwd_tf:7.1f} "
                  f"{rows[-1]['fwd_efficiency']:5.3f} {bwd_ms:8.3f} {bwd_tf:7.1f} "
                  f"{rows[-1]['bwd_efficiency']:5.3f}  {case}")
            torch.cuda.empty_cache()
    with open(args.out, "w") as fh:
        json.dump({"format": "autoddl-torch-attention-bench/1", "gpu": dev.name,
                   "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
                   "peak_flops_per_s": args.peak,
                   "flops": "fwd 4*b*h*s^2*d (halved when causal), bwd 2.5x fwd",
                   "timing": "triton.testing.do_bench(warmup=25 ms, rep=100 ms), median",
                   "rows": rows}, fh, indent=1)
    print(f"# wrote {args.out}")


if __name__ == "__main__":
    main()
