#!/usr/bin/env python3
"""torch_grouped_gemm_bench.py OUT.json: the experts' GEMMs of today's MoE models, timed on this GPU.

Issue 29 prices a Mixture-of-Experts layer's expert GEMMs. Those run as one grouped GEMM over the
experts one GPU holds (Megatron-Core's TEGroupedMLP / torchtitan's torch._grouped_mm), or as one
GEMM per expert in a loop (Megatron-Core's SequentialMLP). Small experts with few tokens each
(Qwen3, DeepSeek-V3: expert FFN 768-2048 wide) run far below the dense GEMM rate, so the dense
table cannot price them. This times both forms on the experts' FC1 (hidden -> 2 x ffn, gate and
up fused, as SwiGLU experts run it) and FC2 (ffn -> hidden) in BF16, forward and forward +
backward (the backward's data- and weight-gradient GEMMs), with the routed tokens spread evenly
over the local experts, at the expert-parallel sizes those models are trained with.

The cases: (model, hidden, expert ffn, local experts, tokens per expert). Tokens per expert =
tokens per micro-batch (4096) x top-k x ep / experts, the all-to-all having brought every rank's
tokens for its experts (balanced routing).

FLOPs: 2 x tokens x K x N per GEMM, backward twice the forward. Efficiency against --peak
(default 989e12, BF16 dense H100/H200 SXM). Timing: triton's do_bench (CUDA events, L2 cleared
before each repetition), the median. A form that fails is recorded with its error.
"""
import argparse
import datetime
import json
import sys

import torch
from triton.testing import do_bench

TOKENS = 4096
CASES = [
    # model,            hidden, ffn,   experts, top_k, ep values
    ("Mixtral-8x7B",      4096, 14336,   8, 2, (1, 8)),
    ("Mixtral-8x22B",     6144, 16384,   8, 2, (8,)),
    ("Qwen3-30B-A3B",     2048,   768, 128, 8, (1, 8, 32)),
    ("Qwen3-235B-A22B",   4096,  1536, 128, 8, (8, 32)),
    ("GPT-OSS-120B",      2880,  2880, 128, 4, (8, 32)),
    ("DeepSeek-V3",       7168,  2048, 256, 8, (8, 32, 64)),
]


def time_ms(fn, grad_to_none=None):
    return do_bench(fn, warmup=10, rep=40, grad_to_none=grad_to_none, return_mode="median")


def grouped(x, w, offs):
    # x (tokens, K), w (experts, N, K) as torchtitan keeps them; offs: cumulative token ends.
    return torch._grouped_mm(x, w.transpose(-2, -1), offs=offs)


def sequential(x, w, counts):
    return torch.cat([xe @ we.t() for xe, we in zip(torch.split(x, counts), w)])


def measure(form, local, per_expert, k, n):
    x = torch.randn(local * per_expert, k, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    w = (torch.randn(local, n, k, device="cuda", dtype=torch.bfloat16) / k ** 0.5).requires_grad_()
    counts = [per_expert] * local
    offs = torch.tensor(counts, device="cuda", dtype=torch.int32).cumsum(0, dtype=torch.int32)
    fn = (lambda: grouped(x, w, offs)) if form == "grouped" else (lambda: sequential(x, w, counts))
    y = fn()
    dy = torch.randn_like(y)
    fwd = time_ms(fn)
    both = time_ms(lambda: fn().backward(dy), grad_to_none=[x, w])
    return fwd, max(0.0, both - fwd)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--peak", type=float, default=989e12)
    args = ap.parse_args()
    dev = torch.cuda.get_device_properties(0)
    print(f"# {dev.name}, torch {torch.__version__}")
    print(f"# {'model':<16} {'ep':>3} {'local':>5} {'tok/exp':>7} {'gemm':<4} {'form':<10} "
          f"{'fwd ms':>8} {'eff':>5} {'bwd ms':>8} {'eff':>5}")
    rows = []
    for model, hidden, ffn, experts, top_k, eps in CASES:
        for ep in eps:
            local = experts // ep
            per_expert = TOKENS * top_k * ep // experts
            per_expert = max(16, (per_expert + 15) // 16 * 16)  # grouped GEMMs take 16-aligned groups
            for gemm, k, n in (("fc1", hidden, 2 * ffn), ("fc2", ffn, hidden)):
                flops = 2.0 * local * per_expert * k * n
                for form in ("grouped", "sequential"):
                    rec = {"model": model, "ep": ep, "local_experts": local, "tokens_per_expert": per_expert,
                           "gemm": gemm, "k": k, "n": n, "form": form, "fwd_flops": flops, "bwd_flops": 2 * flops}
                    try:
                        fwd, bwd = measure(form, local, per_expert, k, n)
                        rec.update({"fwd_ms": fwd, "bwd_ms": bwd,
                                    "fwd_efficiency": flops / (fwd * 1e-3) / args.peak,
                                    "bwd_efficiency": 2 * flops / (bwd * 1e-3) / args.peak if bwd > 0 else None})
                        print(f"  {model:<16} {ep:>3} {local:>5} {per_expert:>7} {gemm:<4} {form:<10} "
                              f"{fwd:8.3f} {rec['fwd_efficiency']:5.3f} {bwd:8.3f} {rec['bwd_efficiency'] or 0:5.3f}")
                    except Exception as e:  # noqa: BLE001  (record and go on)
                        rec["error"] = repr(e)[:400]
                        print(f"  {model:<16} {ep:>3} {local:>5} {per_expert:>7} {gemm:<4} {form:<10} failed: {repr(e)[:120]}")
                    rows.append(rec)
                    torch.cuda.empty_cache()
            sys.stdout.flush()
    with open(args.out, "w") as fh:
        json.dump({"format": "autoddl-torch-grouped-gemm-bench/1", "gpu": dev.name, "torch": torch.__version__,
                   "command": " ".join(sys.argv),
                   "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                   "peak_flops_per_s": args.peak, "tokens_per_micro_batch": TOKENS,
                   "flops": "2 x tokens x K x N per GEMM; backward (dgrad + wgrad) twice the forward",
                   "timing": "triton.testing.do_bench(warmup=10 ms, rep=40 ms), median; bwd = fwd+bwd - fwd",
                   "rows": rows}, fh, indent=1)
    print(f"# wrote {args.out}")


if __name__ == "__main__":
    main()
