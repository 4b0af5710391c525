#!/usr/bin/env python3
"""torch_layer_bench.py OUT.json: one whole transformer layer, forward + backward, and where its time goes.

torch_nongemm_bench.py times each non-GEMM kernel alone. This runs them where they run: one
GPT-3 or Llama-2 layer of each published H100 row (one GPU's share: tp-split heads and FFN,
micro-batch as published; BF16 GEMMs, cuDNN attention through scaled_dot_product_attention,
PyTorch's fused norms, eager activations, RoPE, dropout and residual adds; no tensor-parallel
communication, so under sequence parallelism the layer sees the gathered tokens throughout), and
splits the kernel time (CUPTI, through torch.profiler) into GEMMs, attention and the rest, next
to the wall time of the whole forward + backward. Wall time minus kernel time is the time the
GPU waited for the host to launch.

Timing: the wall time is triton's do_bench median (CUDA events; L2 cleared before each
repetition); the split is one profiled iteration after warm-up. Needs a CUDA GPU, torch >= 2.4,
triton.
"""
import argparse
import datetime
import json
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import ProfilerActivity, profile
from triton.testing import do_bench

from torch_nongemm_bench import HEAD_DIM, ROWS, bias_dropout_add, bias_gelu, rope, swiglu

BF16 = torch.bfloat16


def param(*shape):
    return (torch.randn(*shape, device="cuda", dtype=BF16) / shape[-1] ** 0.5).requires_grad_()


def make_layer(row):
    name, kind, h, ffn, heads, kv, vocab, seq, mb, tp, sp, fp8 = row
    hl, kvl, fl = heads // tp, max(1, kv // tp), ffn // tp
    w = {"qkv": param((hl + 2 * kvl) * HEAD_DIM, h), "proj": param(h, hl * HEAD_DIM),
         "fc1": param((2 if kind == "llama" else 1) * fl, h), "fc2": param(h, fl),
         "n1": torch.ones(h, device="cuda", dtype=BF16, requires_grad=True),
         "n2": torch.ones(h, device="cuda", dtype=BF16, requires_grad=True)}
    if kind == "gpt":
        w.update({"b1": torch.zeros(h, device="cuda", dtype=BF16, requires_grad=True),
                  "b2": torch.zeros(h, device="cuda", dtype=BF16, requires_grad=True),
                  "bqkv": torch.zeros((hl + 2 * kvl) * HEAD_DIM, device="cuda", dtype=BF16, requires_grad=True),
                  "bproj": torch.zeros(h, device="cuda", dtype=BF16, requires_grad=True),
                  "bfc1": torch.zeros(fl, device="cuda", dtype=BF16, requires_grad=True),
                  "bfc2": torch.zeros(h, device="cuda", dtype=BF16, requires_grad=True)})
    cos = torch.randn(seq, 1, 1, HEAD_DIM, device="cuda", dtype=BF16)
    sin = torch.randn(seq, 1, 1, HEAD_DIM, device="cuda", dtype=BF16)

    def layer(x):  # x: (seq, mb, h), Megatron-LM's [s, b, h] layout
        s, b, _ = x.shape
        if kind == "gpt":
            n = F.layer_norm(x, (h,), w["n1"], w["b1"])
            qkv = F.linear(n, w["qkv"], w["bqkv"])
        else:
            n = F.rms_norm(x, (h,), w["n1"])
            qkv = F.linear(n, w["qkv"])
        q, k, v = qkv.split([hl * HEAD_DIM, kvl * HEAD_DIM, kvl * HEAD_DIM], dim=-1)
        q = q.view(s, b, hl, HEAD_DIM)
        k = k.view(s, b, kvl, HEAD_DIM)
        v = v.view(s, b, kvl, HEAD_DIM)
        if kind == "llama":
            q, k = rope(q, cos, sin), rope(k, cos, sin)
        q, k, v = (t.permute(1, 2, 0, 3) for t in (q, k, v))  # (b, heads, s, d)
        if kvl != hl:
            k = k.repeat_interleave(hl // kvl, dim=1)
            v = v.repeat_interleave(hl // kvl, dim=1)
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        o = o.permute(2, 0, 1, 3).reshape(s, b, hl * HEAD_DIM)
        if kind == "gpt":
            a = F.linear(o, w["proj"])
            x = bias_dropout_add(a, w["bproj"], x)
            n = F.layer_norm(x, (h,), w["n2"], w["b2"])
            f = bias_gelu(F.linear(n, w["fc1"]), w["bfc1"])
            return bias_dropout_add(F.linear(f, w["fc2"]), w["bfc2"], x)
        x = x + F.linear(o, w["proj"])
        n = F.rms_norm(x, (h,), w["n2"])
        return x + F.linear(swiglu(F.linear(n, w["fc1"])), w["fc2"])

    return layer, [t for t in w.values() if t.requires_grad]


def category(name):
    n = name.lower()
    if any(s in n for s in ("fmha", "cudnn", "flash", "attn", "sdpa")):
        return "attention"
    if any(s in n for s in ("gemm", "xmma", "cutlass", "nvjet", "cublas", "sm90_", "matmul")):
        return "gemm"
    return "other"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    args = ap.parse_args()
    dev = torch.cuda.get_device_properties(0)
    print(f"# {dev.name}, torch {torch.__version__}")
    print(f"# {'row':<15} {'wall ms':>8} {'kernels':>8} {'gemm':>8} {'attn':>8} {'other':>8} {'idle':>8}  other kernels")
    rows = []
    for row in ROWS:
        name, kind, h, ffn, heads, kv, vocab, seq, mb, tp, sp, fp8 = row
        rec = {"row": name, "kind": kind, "hidden": h, "ffn_local": ffn // tp, "heads_local": heads // tp,
               "seq": seq, "micro_batch": mb, "tp": tp}
        try:
            layer, weights = make_layer(row)
            x = torch.randn(seq, mb, h, device="cuda", dtype=BF16, requires_grad=True)
            dy = torch.randn(seq, mb, h, device="cuda", dtype=BF16)

            def step():
                layer(x).backward(dy)

            wall = do_bench(step, warmup=10, rep=60, grad_to_none=[x] + weights, return_mode="median")
            for _ in range(3):
                step()
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                step()
                torch.cuda.synchronize()
            split = {"gemm": 0.0, "attention": 0.0, "other": 0.0}
            counts = {"gemm": 0, "attention": 0, "other": 0}
            others = {}
            for ev in prof.key_averages():
                t_ms = ev.device_time_total / 1e3 if hasattr(ev, "device_time_total") else ev.cuda_time_total / 1e3
                if t_ms <= 0 or ev.key.startswith("ProfilerStep") or " " in ev.key and ev.key.startswith("aten::"):
                    continue
                if ev.key.startswith("aten::") or ev.key.startswith("autograd::"):
                    continue
                c = category(ev.key)
                split[c] += t_ms
                counts[c] += ev.count
                if c == "other":
                    others[ev.key[:90]] = others.get(ev.key[:90], 0.0) + t_ms
            kernels = sum(split.values())
            rec.update({"wall_ms": wall, "kernel_ms": kernels, "gemm_ms": split["gemm"],
                        "attention_ms": split["attention"], "other_ms": split["other"],
                        "idle_ms": max(0.0, wall - kernels), "kernels": counts,
                        "other_kernels_ms": dict(sorted(others.items(), key=lambda kv_: -kv_[1])[:25])})
            top = ", ".join(f"{k[:28]} {v:.3f}" for k, v in list(rec["other_kernels_ms"].items())[:4])
            print(f"  {name:<15} {wall:8.3f} {kernels:8.3f} {split['gemm']:8.3f} {split['attention']:8.3f} "
                  f"{split['other']:8.3f} {rec['idle_ms']:8.3f}  kernels {counts}; {top}")
            del layer, weights, x, dy
        except Exception as e:  # noqa: BLE001  (record and go on)
            rec["error"] = repr(e)[:400]
            print(f"  {name:<15} failed: {repr(e)[:150]}")
        rows.append(rec)
        torch.cuda.empty_cache()
        sys.stdout.flush()
    with open(args.out, "w") as fh:
        json.dump({"format": "autoddl-torch-layer-bench/1", "gpu": dev.name, "torch": torch.__version__,
                   "command": " ".join(sys.argv),
                   "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                   "timing": "wall: triton.testing.do_bench(warmup=10 ms, rep=60 ms) median of forward+backward; "
                             "split: torch.profiler (CUPTI) kernel time of one iteration",
                   "rows": rows}, fh, indent=1)
    print(f"# wrote {args.out}")


if __name__ == "__main__":
    main()
