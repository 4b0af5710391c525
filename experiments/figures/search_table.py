#!/usr/bin/env python3
"""Prints a sweep of `search` cells as a Markdown table: per cell the best searched result
(method, iteration, how it got there), the fastest feasible baseline (the best expert), the
speedup, and the cell's wall time (the whole `autoddl search` process). Reads sweep results
only. Usage: search_table.py SWEEP_DIR"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from sweeplib import load_rows  # noqa: E402

BASELINES = {"dp", "zero1", "zero3", "megatron", "owt"}


def seconds(x):
    """An iteration time in s, or in ms below a second (the CNN rows)."""
    return f"{x:.2f} s" if x >= 1 else f"{x * 1e3:.2f} ms"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder")
    args = ap.parse_args()
    rows = sorted(load_rows(args.folder), key=lambda r: (r["inputs"]["model"], r["inputs"]["cluster"], r["inputs"]["gpus"]))
    print("| model | cluster | GPUs | searched | found by | best expert | expert layout | speedup | search wall |")
    print("|---|---|---:|---:|---|---:|---|---:|---:|")
    for r in rows:
        res = r["results"]["search"]["results"]
        ok = [x for x in res if x.get("feasible")]
        searched = min((x for x in ok if x["method"] not in BASELINES), key=lambda x: x["iteration_s"], default=None)
        expert = min((x for x in ok if x["method"] in BASELINES), key=lambda x: x["iteration_s"], default=None)
        i = r["inputs"]
        s_txt = seconds(searched["iteration_s"]) if searched else "-"
        e_txt = seconds(expert["iteration_s"]) if expert else "none feasible"
        speed = f"{expert['iteration_s'] / searched['iteration_s']:.3f}x" if searched and expert else "-"
        how = f"{searched['method']} ({searched['note']})" if searched else "-"
        layout = f"{expert['method']} {expert['note']}".strip() if expert else "-"
        print(f"| {i['model']} | {i['cluster']} | {i['gpus']} | {s_txt} | {how} | {e_txt} | {layout} | {speed} | {r['wall_s']:.0f} s |")


if __name__ == "__main__":
    main()
