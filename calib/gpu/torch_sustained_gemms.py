#!/usr/bin/env python3
"""torch_sustained_gemms.py SHAPES.json OUT.json [--seconds S] [--rows NAME,...]: GEMM rate held for S s.

The per-shape timings (torch_plan_gemms.py, gemm_cublaslt) are bursts of about 100 ms on a cool
GPU. Training runs the same GEMMs for hours at the board's power limit. This runs one published
row's per-layer GEMM sequence (scripts/published-gemm-shapes: forward, dgrad, wgrad of every GEMM
of a layer, in the lowering's order; FP8 forward with fast accumulation) back to back for S
seconds per row and reports, per second, the achieved TFLOP/s next to the SM clock, power draw
and temperature NVML reads, so that burst and sustained rates can be told apart.
"""
import argparse
import json
import time

import pynvml
import torch

from torch_fp8 import fp8_gemm


def gemm_calls(row):
    """One callable per GEMM of the row, with its FLOPs; inputs from N(0, 1) allocated once."""
    calls = []
    for g in row["gemms"]:
        m, n, k = g["m"], g["n"], g["k"]
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        if g["dtype"] == "fp8":
            mm8, fast = fp8_gemm(a, b), g["what"] == "fwd"
            calls.append((lambda mm8=mm8, fast=fast: mm8(fast), 2.0 * m * n * k))
        else:
            calls.append((lambda a=a, b=b: a @ b, 2.0 * m * n * k))
    return calls


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("shapes")
    ap.add_argument("out")
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--rows", default="GPT3-175B bf16 x128,GPT3-175B x128")
    args = ap.parse_args()
    shapes = json.load(open(args.shapes))
    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(0)
    dev = torch.cuda.get_device_properties(0)
    print(f"# {dev.name}, torch {torch.__version__}; power limit {pynvml.nvmlDeviceGetEnforcedPowerLimit(h) / 1000:.0f} W")
    result = {"format": "autoddl-sustained-gemms/1", "gpu": dev.name, "torch": torch.__version__,
              "seconds": args.seconds, "rows": []}
    for name in args.rows.split(","):
        row = next(r for r in shapes["rows"] if r["name"] == name)
        calls = gemm_calls(row)
        flops_per_pass = sum(f for _, f in calls)
        for fn, _ in calls:  # warm-up: cuBLAS heuristics, kernel load
            fn()
        torch.cuda.synchronize()
        samples = []
        start = time.perf_counter()
        print(f"# {name}: {len(calls)} GEMMs, {flops_per_pass / 1e12:.2f} TFLOP per pass")
        print(f"#   {'t (s)':>6} {'TFLOP/s':>8} {'SM MHz':>7} {'W':>6} {'C':>4}")
        while time.perf_counter() - start < args.seconds:
            t0 = time.perf_counter()
            passes = 0
            while time.perf_counter() - t0 < 1.0:
                for fn, _ in calls:
                    fn()
                passes += 1
                if passes % 4 == 0:
                    torch.cuda.synchronize()
            torch.cuda.synchronize()
            dt = time.perf_counter() - t0
            s = {"t_s": time.perf_counter() - start, "tflops": passes * flops_per_pass / dt / 1e12,
                 "sm_mhz": pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
                 "power_w": pynvml.nvmlDeviceGetPowerUsage(h) / 1000,
                 "temp_c": pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU)}
            samples.append(s)
            print(f"    {s['t_s']:6.1f} {s['tflops']:8.1f} {s['sm_mhz']:7d} {s['power_w']:6.0f} {s['temp_c']:4d}")
        result["rows"].append({"name": name, "gemms": len(calls), "flops_per_pass": flops_per_pass, "samples": samples})
        del calls
        torch.cuda.empty_cache()
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print(f"# wrote {args.out}")


if __name__ == "__main__":
    main()
