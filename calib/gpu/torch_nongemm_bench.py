#!/usr/bin/env python3
"""torch_nongemm_bench.py OUT.json: the non-GEMM kernels of one transformer layer, timed on this GPU.

Issue 28 item 8: the published H100 rows with small layers (GPT-3 5B, Llama-2 7B / 13B) are
predicted 12-15% fast while their GEMMs and attention are priced within a few percent of
measurement (torch_plan_gemms.json, torch_attention_bench.json). What is left is the kernels
priced as ideal rooflines: norms, activations, rotary embedding, dropout / residual adds, FP8
casts, the vocabulary cross-entropy and the optimizer step. This times each of them, on the
tensors one GPU handles per micro-batch in each published H100 row (the shapes below are those
rows' layouts: tokens = micro-batch x seq, divided by tp where sequence parallelism keeps a
tensor sequence-split; ffn, heads and vocabulary divided by tp).

Each kernel is timed in up to three forms, so that the cost model can say which one a framework
runs:
  eager     plain PyTorch ops (one kernel per op; what a framework without fusion runs)
  compiled  the same function through torch.compile (inductor/triton fuses the elementwise
            chain into one kernel: the analogue of Megatron-LM's jit-fused bias-gelu,
            bias-dropout-add and Transformer Engine's fused SwiGLU / RoPE / cast kernels)
  fused     PyTorch's own fused kernel where one exists (F.layer_norm, F.rms_norm, F.gelu,
            AdamW(fused=True))
and the bytes each must move at least (read + write, listed per kernel below), so that a
kernel's rate is bytes / time against the HBM datasheet rate of the GPU it ran on (--hbm; by
default the H200 SXM's 4.8e12 or the H100 SXM's 3.35e12).

Also measured: the PyTorch launch path (a 1-element add launched 2,000 times: host time per
launch, and GPU time per kernel when launched back to back).

Timing: the kernels' own time from CUPTI (torch.profiler, 5 calls after a warm-up), which is what
the cost model's kernel times mean (it charges launches separately), and beside it triton's
do_bench median of CUDA-event time (L2 cleared before each repetition), which also counts the
gaps where the GPU waited for the host (large for torch.compile's backward). A kernel
that fails (an op this torch lacks, a compile error) is recorded with its error and the run goes
on. Needs a CUDA GPU, torch >= 2.4, triton.
"""
import argparse
import datetime
import json
import sys
import time

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile
from triton.testing import do_bench

# Every kernel below is a lambda of the same code object; let dynamo compile each of them.
for _knob in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit", "accumulated_recompile_limit"):
    if hasattr(torch._dynamo.config, _knob):
        setattr(torch._dynamo.config, _knob, 4096)

# The published H100 rows (experiments/published/nemo_24_12_h100_fp8.json and
# dgxc_nemo_h100_bf16.json): model family, hidden, ffn, heads, KV heads, vocabulary, seq, micro-batch,
# tp, sequence parallelism, fp8. The rows predicted fastest first, so that a run cut short has them.
ROWS = [
    # name,               kind,   h,     ffn,   heads, kv, vocab, seq,  mb, tp, sp, fp8
    ("Llama-2 7B",        "llama", 4096, 11008, 32, 32, 32000, 4096, 1, 1, 0, 1),
    ("GPT3-5B",           "gpt",   4096, 16384, 32, 32, 51200, 2048, 4, 1, 0, 1),
    ("Llama-2 13B",       "llama", 5120, 13824, 40, 40, 32000, 4096, 1, 1, 0, 1),
    ("GPT3-20B",          "gpt",   6144, 24576, 48, 48, 51200, 2048, 2, 2, 1, 1),
    ("Llama-2 70B",       "llama", 8192, 28672, 64, 8, 32000, 4096, 1, 4, 1, 1),
    ("GPT3-175B mb1",     "gpt",  12288, 49152, 96, 96, 51200, 2048, 1, 4, 1, 1),
    ("GPT3-175B mb2",     "gpt",  12288, 49152, 96, 96, 51200, 2048, 2, 4, 1, 1),
]
HEAD_DIM = 128
BF16 = torch.bfloat16


def time_ms(fn, grad_to_none=None):
    return do_bench(fn, warmup=10, rep=40, grad_to_none=grad_to_none, return_mode="median")


GRAD_TENSORS = []  # every tensor made with grad=True: its .grad is dropped after each backward


def rand(*shape, dtype=BF16, grad=False):
    t = torch.randn(*shape, device="cuda", dtype=dtype, requires_grad=grad)
    if grad:
        GRAD_TENSORS.append(t)
    return t


# ---- the kernels, each as (forward function, its inputs, minimal forward bytes, minimal backward bytes)


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def rope(x, cos, sin):
    return x * cos + rotate_half(x) * sin


def swiglu(x):
    a, b = x.chunk(2, dim=-1)
    return F.silu(a) * b


def bias_gelu(x, bias):
    return F.gelu(x + bias, approximate="tanh")


def bias_dropout_add(x, bias, residual):
    return residual + F.dropout(x + bias, p=0.1, training=True)


def residual_add(x, residual):
    return x + residual


def fp8_cast_amax(x, scale):
    # Transformer Engine's cast: amax for the scaling recipe, scaled cast to E4M3, and the
    # transposed copy its wgrad GEMM reads (Hopper FP8 GEMMs take TN operands only).
    amax = x.abs().amax()
    y = (x.float() * scale).to(torch.float8_e4m3fn)
    return y, y.t().contiguous(), amax


def kernels_for(row):
    name, kind, h, ffn, heads, kv, vocab, seq, mb, tp, sp, fp8 = row
    GRAD_TENSORS.clear()
    tokens = mb * seq
    tokens_sp = tokens // tp if sp else tokens
    f_local, heads_local, kv_local, v_local = ffn // tp, heads // tp, max(1, kv // tp), vocab // tp
    out = []
    # Norms on the sequence-split hidden: fwd reads x, writes y; bwd reads x and dy, writes dx.
    norm_elems = tokens_sp * h
    if kind == "gpt":
        w, b = rand(h, grad=True), rand(h, grad=True)
        out.append(("layer_norm", "fused", lambda x: F.layer_norm(x, (h,), w, b), [(tokens_sp, h)],
                    4 * norm_elems, 6 * norm_elems))
    else:
        w = rand(h, grad=True)
        out.append(("rms_norm", "fused", lambda x: F.rms_norm(x, (h,), w), [(tokens_sp, h)],
                    4 * norm_elems, 6 * norm_elems))
        out.append(("rms_norm", "compiled", lambda x: F.rms_norm(x, (h,), w), [(tokens_sp, h)],
                    4 * norm_elems, 6 * norm_elems))
    # Activations on the tp-split FFN: fwd reads the FC1 output, writes the activation.
    if kind == "gpt":
        bias = rand(f_local, grad=True)
        e = tokens * f_local
        for variant in ("eager", "compiled"):
            out.append(("bias_gelu", variant, lambda x: bias_gelu(x, bias), [(tokens, f_local)], 4 * e, 6 * e))
        e = tokens_sp * h
        bias_h = rand(h, grad=True)
        res = rand(tokens_sp, h, grad=True)
        for variant in ("eager", "compiled"):  # writes out and a 1-byte mask; bwd reads dy and mask, writes dx
            out.append(("bias_dropout_add", variant, lambda x: bias_dropout_add(x, bias_h, res), [(tokens_sp, h)],
                        7 * e, 5 * e))
    else:
        e = tokens * f_local
        for variant in ("eager", "compiled"):  # fwd reads gate and up, writes one; bwd reads 3, writes 2
            out.append(("swiglu", variant, swiglu, [(tokens, 2 * f_local)], 6 * e, 10 * e))
        # RoPE on q and k: (tokens, heads, 128) each; fwd reads and writes each element once.
        cos, sin = rand(seq, 1, HEAD_DIM), rand(seq, 1, HEAD_DIM)
        cos_b, sin_b = cos.repeat(mb, 1, 1), sin.repeat(mb, 1, 1)
        for heads_n, what in ((heads_local, "rope_q"), (kv_local, "rope_k")):
            e = tokens * heads_n * HEAD_DIM
            for variant in ("eager", "compiled"):
                out.append((what, variant, lambda x: rope(x, cos_b, sin_b), [(tokens, heads_n, HEAD_DIM)], 4 * e, 4 * e))
        e = tokens_sp * h
        res = rand(tokens_sp, h, grad=True)
        out.append(("residual_add", "eager", lambda x: residual_add(x, res), [(tokens_sp, h)], 6 * e, 4 * e))
    # FP8 casts of the GEMM inputs Transformer Engine casts per micro-batch: the norm output
    # (gathered to all tokens under sp) and the FC2 input; fwd only (reads bf16, writes fp8 and
    # its transpose: 4 bytes per element).
    if fp8:
        scale = torch.tensor(1.0, device="cuda")
        for what, shape in (("fp8_cast_hidden", (tokens, h)), ("fp8_cast_ffn", (tokens, f_local))):
            e = shape[0] * shape[1]
            for variant in ("eager", "compiled"):
                out.append((what, variant, lambda x: fp8_cast_amax(x, scale), [shape], 4 * e, 0))
    # The loss on the tp-split vocabulary: fp32 logits (Megatron-LM casts them, as its
    # vocab-parallel cross-entropy does); fwd reads bf16 logits, bwd writes bf16 dlogits and reads them.
    e = tokens * v_local
    tgt = torch.randint(0, v_local, (tokens,), device="cuda")
    out.append(("cross_entropy", "eager", lambda x: F.cross_entropy(x.float(), tgt), [(tokens, v_local)],
                2 * e, 4 * e))
    return out


def kernel_ms(fn, iters=5):
    """Kernel time per call from CUPTI (torch.profiler): the GPU's own time, free of the host
    launch gaps that CUDA events also count when the host is slower than the kernels."""
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            fn()
        torch.cuda.synchronize()
    total, count = 0.0, 0
    for ev in prof.key_averages():
        if ev.key.startswith(("aten::", "autograd::", "ProfilerStep", "cuda")):
            continue
        t = getattr(ev, "device_time_total", None)
        if t is None:
            t = ev.cuda_time_total
        if t > 0:
            total += t
            count += ev.count
    return total / 1e3 / iters, count / iters


def measure_kernel(fn, variant, shapes, need_bwd):
    if variant == "compiled":
        fn = torch.compile(fn, dynamic=False)
    xs = [rand(*s, grad=need_bwd) for s in shapes]
    y = fn(*xs)
    first = y[0] if isinstance(y, tuple) else y
    r = {"fwd_ms": time_ms(lambda: fn(*xs))}
    r["fwd_kernel_ms"], r["fwd_kernels"] = kernel_ms(lambda: fn(*xs))
    if need_bwd:
        dy = torch.randn_like(first)

        def step():
            out = fn(*xs)
            o = out[0] if isinstance(out, tuple) else out
            o.backward(dy if o.dim() else None)
            for t in GRAD_TENSORS:  # no gradient accumulation kernels in the backward's time
                t.grad = None

        r["bwd_ms"] = max(0.0, time_ms(step, grad_to_none=xs) - r["fwd_ms"])
        both_ms, both_kernels = kernel_ms(step)
        r["bwd_kernel_ms"] = max(0.0, both_ms - r["fwd_kernel_ms"])
        r["bwd_kernels"] = both_kernels - r["fwd_kernels"]
    return r


def launch_overhead():
    x = torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    n = 2000
    t0 = time.perf_counter()
    for _ in range(n):
        x.add_(1)
    host = (time.perf_counter() - t0) / n
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(n):
        x.add_(1)
    end.record()
    torch.cuda.synchronize()
    return {"host_s_per_launch": host, "gpu_s_per_kernel_back_to_back": start.elapsed_time(end) / 1e3 / n}


def adam_rows(hbm):
    rows = []
    for millions in (64, 256, 1024):
        n = millions * 1_000_000
        # Megatron-LM's distributed optimizer: fp32 main parameters, fp32 main gradients, fp32
        # Adam moments, in layer-sized tensors; fused AdamW reads p, g, m, v and writes p, m, v.
        chunk = 16 * 1024 * 1024
        params = [torch.nn.Parameter(torch.randn(min(chunk, n - i), device="cuda")) for i in range(0, n, chunk)]
        for p in params:
            p.grad = torch.randn_like(p)
        try:
            opt = torch.optim.AdamW(params, lr=1e-4, fused=True)
            opt.step()
            ms = time_ms(opt.step)
            bytes_ = 28.0 * n
            rows.append({"kernel": "adamw_step", "variant": "fused", "params": n, "fwd_ms": ms,
                         "fwd_bytes": bytes_, "fwd_hbm_fraction": bytes_ / (ms * 1e-3) / hbm,
                         "s_per_param": ms * 1e-3 / n})
            print(f"  adamw fused {n/1e6:6.0f} M params {ms:8.3f} ms  {bytes_/(ms*1e-3)/1e12:6.2f} TB/s")
        except Exception as e:  # noqa: BLE001  (record and go on)
            rows.append({"kernel": "adamw_step", "variant": "fused", "params": n, "error": repr(e)[:400]})
        del params
        torch.cuda.empty_cache()
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--hbm", type=float, default=None,
                    help="HBM bytes/s the fractions are of (default: the datasheet rate of an H100 or H200 SXM)")
    ap.add_argument("--compile-budget-s", type=float, default=120,
                    help="stop timing compiled variants after this much time in them")
    args = ap.parse_args()
    dev = torch.cuda.get_device_properties(0)
    if args.hbm is None:  # NVIDIA H200 / H100 SXM datasheets: 4.8 TB/s HBM3e, 3.35 TB/s HBM3
        args.hbm = 4.8e12 if "H200" in dev.name else 3.35e12
    print(f"# {dev.name}, torch {torch.__version__}, fractions of {args.hbm:.3g} B/s")
    te = None
    try:
        import transformer_engine  # noqa: F401
        te = transformer_engine.__version__
    except Exception:  # noqa: BLE001
        pass
    results = []
    compile_spent = 0.0
    print(f"# kernel time (CUPTI) per call, its rate over the least bytes, kernels per call, and CUDA-event time")
    print(f"# {'row':<15} {'kernel':<17} {'variant':<9} {'fwd ms':>8} {'bwd ms':>8} {'fwd TB/s':>8} {'bwd TB/s':>8} "
          f"{'#fwd':>4} {'#bwd':>4} {'ev fwd':>8} {'ev bwd':>8}")
    for row in ROWS:
        for kernel, variant, fn, shapes, fwd_bytes, bwd_bytes in kernels_for(row):
            rec = {"row": row[0], "kernel": kernel, "variant": variant, "shapes": shapes,
                   "fwd_bytes": fwd_bytes, "bwd_bytes": bwd_bytes}
            if variant == "compiled" and compile_spent > args.compile_budget_s:
                rec["error"] = "skipped: compile budget spent"
                results.append(rec)
                continue
            t0 = time.perf_counter()
            try:
                m = measure_kernel(fn, variant, shapes, bwd_bytes > 0)
                rec.update(m)
                kf, kb = m["fwd_kernel_ms"], m.get("bwd_kernel_ms", 0)
                rec["fwd_hbm_fraction"] = fwd_bytes / (kf * 1e-3) / args.hbm
                if kb:
                    rec["bwd_hbm_fraction"] = bwd_bytes / (kb * 1e-3) / args.hbm
                print(f"  {row[0]:<15} {kernel:<17} {variant:<9} {kf:8.4f} {kb:8.4f} "
                      f"{fwd_bytes/(kf*1e-3)/1e12:8.2f} {(bwd_bytes/(kb*1e-3)/1e12) if kb else 0:8.2f} "
                      f"{m['fwd_kernels']:4.0f} {m.get('bwd_kernels', 0):4.0f} {m['fwd_ms']:8.4f} {m.get('bwd_ms', 0):8.4f}")
            except Exception as e:  # noqa: BLE001  (record and go on)
                rec["error"] = repr(e)[:400]
                print(f"  {row[0]:<15} {kernel:<17} {variant:<9} failed: {repr(e)[:150]}")
            if variant == "compiled":
                compile_spent += time.perf_counter() - t0
            results.append(rec)
            torch.cuda.empty_cache()
        sys.stdout.flush()
    results += adam_rows(args.hbm)
    launch = launch_overhead()
    print(f"# launch: {launch}")
    with open(args.out, "w") as fh:
        json.dump({"format": "autoddl-torch-nongemm-bench/1", "gpu": dev.name, "torch": torch.__version__,
                   "transformer_engine": te, "command": " ".join(sys.argv),
                   "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                   "hbm_bytes_per_s": args.hbm,
                   "bytes": "the least each kernel must move: reads + writes of its tensors (see the script)",
                   "timing": "fwd_kernel_ms / bwd_kernel_ms: CUPTI kernel time per call (torch.profiler, 5 calls; "
                             "bwd = fwd+bwd - fwd), the hbm fractions are of these; fwd_ms / bwd_ms: "
                             "triton.testing.do_bench(warmup=10 ms, rep=40 ms) median of CUDA-event time, which also "
                             "counts host launch gaps",
                   "launch": launch, "rows": results}, fh, indent=1)
    print(f"# wrote {args.out}")


if __name__ == "__main__":
    main()
