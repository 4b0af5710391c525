#!/usr/bin/env python3
"""torch_moe_ops_bench.py OUT.json: the non-GEMM kernels of a Mixture-of-Experts layer, timed on this GPU.

Issue 29 prices an MoE layer's router and token shuffles beside its expert GEMMs
(torch_grouped_gemm_bench.py). This times, on one micro-batch of 4,096 tokens per GPU:
  router     the gating GEMM (hidden -> experts, fp32 logits as Megatron-Core computes them), its
             softmax (Mixtral, Qwen3, GPT-OSS) or sigmoid (DeepSeek-V3) and top-k
  permute    the tokens sorted by expert and gathered: (tokens x top-k, hidden), forward; its
             backward is the scatter-add of the gradients back to the tokens
  unpermute  the experts' outputs weighted by their routing probabilities and summed back per
             token (index_add_), forward; its backward is the gather
each with the least bytes it must move (a rate over them), by CUPTI kernel time and kernel count,
as torch_nongemm_bench.py measures (its kernel_ms). Eager PyTorch: Megatron-Core's
--moe-permute-fusion replaces permute/unpermute with Transformer Engine's fused kernels.

Needs a CUDA GPU, torch >= 2.4, triton.
"""
import argparse
import datetime
import json
import sys

import torch

from torch_nongemm_bench import kernel_ms, time_ms

TOKENS = 4096
CASES = [
    # model,            hidden, experts, top_k, score
    ("Mixtral-8x7B",      4096,   8, 2, "softmax"),
    ("Qwen3-30B-A3B",     2048, 128, 8, "softmax"),
    ("Qwen3-235B-A22B",   4096, 128, 8, "softmax"),
    ("GPT-OSS-120B",      2880, 128, 4, "softmax"),
    ("DeepSeek-V3",       7168, 256, 8, "sigmoid"),
]
BF16 = torch.bfloat16


def router(x, w, top_k, score):
    logits = x.float() @ w.float().t()
    probs = torch.softmax(logits, dim=-1) if score == "softmax" else torch.sigmoid(logits)
    top, idx = torch.topk(probs, top_k, dim=-1)
    return top, idx


def measure(fn, inputs, grad):
    def step():
        out = fn()
        o = out[0] if isinstance(out, tuple) else out
        if grad:
            o.backward(torch.ones_like(o))
            for t in inputs:
                t.grad = None

    fwd_ms, fwd_k = kernel_ms(fn)
    r = {"fwd_kernel_ms": fwd_ms, "fwd_kernels": fwd_k, "fwd_ms": time_ms(fn)}
    if grad:
        both_ms, both_k = kernel_ms(step)
        r.update({"bwd_kernel_ms": max(0.0, both_ms - fwd_ms), "bwd_kernels": both_k - fwd_k})
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    args = ap.parse_args()
    dev = torch.cuda.get_device_properties(0)
    print(f"# {dev.name}, torch {torch.__version__}; CUPTI kernel time per call")
    print(f"# {'model':<16} {'op':<10} {'fwd ms':>8} {'bwd ms':>8} {'#fwd':>5} {'#bwd':>5} {'fwd GB/s':>9} {'bwd GB/s':>9}")
    rows = []
    for model, h, experts, top_k, score in CASES:
        x = torch.randn(TOKENS, h, device="cuda", dtype=BF16, requires_grad=True)
        w = (torch.randn(experts, h, device="cuda", dtype=BF16) / h ** 0.5).requires_grad_()
        routed = TOKENS * top_k
        with torch.no_grad():
            _, idx = router(x, w, top_k, score)
        order = torch.argsort(idx.flatten(), stable=True)  # routed slots sorted by expert
        token_of = order // top_k                          # the token each sorted slot came from
        y = torch.randn(routed, h, device="cuda", dtype=BF16, requires_grad=True)
        p = torch.rand(routed, device="cuda", dtype=BF16)
        cases = {
            # reads x, writes the logits (fp32) and the top-k; bwd reads and writes the same
            "router": (lambda: router(x, w, top_k, score), [x, w], 2.0 * TOKENS * h + 4.0 * TOKENS * experts),
            # gathers routed rows: reads and writes routed x hidden bf16 (+ the indices)
            "permute": (lambda: x.index_select(0, token_of), [x], 4.0 * routed * h),
            # weights and sums the experts' rows back per token: reads routed rows, writes tokens
            "unpermute": (lambda: torch.zeros(TOKENS, h, device="cuda", dtype=BF16).index_add(
                0, token_of, y * p[:, None]), [y], 2.0 * routed * h + 2.0 * TOKENS * h),
        }
        for op, (fn, inputs, bytes_) in cases.items():
            rec = {"model": model, "op": op, "tokens": TOKENS, "hidden": h, "experts": experts, "top_k": top_k,
                   "score": score, "bytes": bytes_}
            try:
                rec.update(measure(fn, inputs, True))
                kf, kb = rec["fwd_kernel_ms"], rec.get("bwd_kernel_ms", 0)
                print(f"  {model:<16} {op:<10} {kf:8.4f} {kb:8.4f} {rec['fwd_kernels']:5.0f} {rec.get('bwd_kernels', 0):5.0f} "
                      f"{bytes_ / (kf * 1e-3) / 1e9:9.0f} {bytes_ / (kb * 1e-3) / 1e9 if kb else 0:9.0f}")
            except Exception as e:  # noqa: BLE001  (record and go on)
                rec["error"] = repr(e)[:400]
                print(f"  {model:<16} {op:<10} failed: {repr(e)[:150]}")
            rows.append(rec)
        del x, w, y, p
        torch.cuda.empty_cache()
        sys.stdout.flush()
    with open(args.out, "w") as fh:
        json.dump({"format": "autoddl-torch-moe-ops-bench/1", "gpu": dev.name, "torch": torch.__version__,
                   "command": " ".join(sys.argv),
                   "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                   "tokens_per_micro_batch": TOKENS,
                   "bytes": "the least each op must move (see the script); bwd the same bytes",
                   "timing": "CUPTI kernel time per call (torch.profiler, 5 calls), bwd = fwd+bwd - fwd; "
                             "fwd_ms: triton do_bench median of CUDA-event time",
                   "rows": rows}, fh, indent=1)
    print(f"# wrote {args.out}")


if __name__ == "__main__":
    main()
