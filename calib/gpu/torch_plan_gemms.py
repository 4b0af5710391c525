#!/usr/bin/env python3
"""torch_plan_gemms.py SHAPES.json OUT.json: time the GEMMs of scripts/published-gemm-shapes.

Each distinct (M, N, K, batch, dtype) once: bf16 through torch.matmul (batched when batch > 1),
fp8 (E4M3 in, bf16 out, unit scales) through torch._scaled_mm both with full-precision and with
fast accumulation (Transformer Engine runs its forward GEMMs with fast accumulation and its dgrad
and wgrad GEMMs without). Timing: triton's do_bench (CUDA events, L2 cleared before each
repetition), the median; inputs from N(0, 1), fresh per shape. Needs a CUDA GPU, torch, triton.
"""
import json
import sys

import torch
from triton.testing import do_bench

from torch_fp8 import fp8_gemm


def time_ms(fn):
    return do_bench(fn, warmup=20, rep=80, return_mode="median")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: torch_plan_gemms.py SHAPES.json OUT.json")
    shapes = json.load(open(sys.argv[1]))
    distinct = sorted({(g["m"], g["n"], g["k"], g["batch"], g["dtype"])
                       for row in shapes["rows"] for g in row["gemms"]})
    dev = torch.cuda.get_device_properties(0)
    print(f"# {dev.name}, torch {torch.__version__}: {len(distinct)} distinct GEMMs")
    out = []
    for m, n, k, batch, dtype in distinct:
        lead = (batch,) if batch > 1 else ()
        a = torch.randn(*lead, m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(*lead, k, n, device="cuda", dtype=torch.bfloat16)
        flops = 2.0 * batch * m * n * k
        row = {"m": m, "n": n, "k": k, "batch": batch, "dtype": dtype, "flops": flops}
        if dtype == "fp8":
            if batch > 1:
                row["skipped"] = "torch._scaled_mm takes 2-D operands"
            else:
                mm8 = fp8_gemm(a, b)
                for key, fast in (("ms", False), ("fast_accum_ms", True)):
                    row[key] = time_ms(lambda fast=fast: mm8(fast))
        else:
            row["ms"] = time_ms(lambda: a @ b)
        out.append(row)
        tf = f"{flops / row['ms'] / 1e9:7.1f}" if "ms" in row else "      -"
        print(f"  {m:>6} {n:>6} {k:>6} x{batch:<3} {dtype:<5} {row.get('ms', float('nan')):8.4f} ms {tf} TFLOP/s"
              + (f"  fast {row['fast_accum_ms']:8.4f} ms" if "fast_accum_ms" in row else ""))
        del a, b
        torch.cuda.empty_cache()
    with open(sys.argv[2], "w") as f:
        json.dump({"format": "autoddl-plan-gemms/1", "gpu": dev.name, "torch": torch.__version__,
                   "shapes_command": shapes.get("command", ""),
                   "timing": "triton.testing.do_bench(warmup=20 ms, rep=80 ms), median",
                   "rows": out}, f, indent=1)
    print(f"# wrote {sys.argv[2]}")


if __name__ == "__main__":
    main()
