#!/usr/bin/python3
"""Simulator against the analytical model: per cell of a sweep with the `sim` evaluator, the
simulated iteration time (SimGrid, flow-level network with contention) against the analytical
model's for the same scheme, log-log with the y = x line and a +-10% band.

  experiments/figures/sim_vs_analytical.py SWEEP_DIR --out docs/figures"""
import statistics
import sys

import matplotlib.pyplot as plt

from sweeplib import figure_parser, load_rows, save


def parity_points(rows):
    """(analytical ms, simulated ms, model, cluster, GPUs, scheme) of every row with a simulation."""
    pts = []
    for r in rows:
        s = r["results"].get("simulate")
        if not s:
            continue
        i = r["inputs"]
        scheme = i.get("scheme") or "searched (" + i.get("method", "?") + ")"
        pts.append((s["analytical_iteration_s"] * 1e3, s["iteration_s"] * 1e3, i["model"], i["cluster"], i["gpus"], scheme))
    return pts


def draw_parity(ax, pts):
    """Log-log scatter of the points, one colour per cluster and marker per model, with y = x and
    a +-10% band; prints the agreement summary and the five largest differences."""
    colors = {"piz-daint": "#1f77b4", "dgx-a100": "#d62728"}
    others = iter(["#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"])
    for cl in sorted({p[3] for p in pts}):
        if cl not in colors:
            colors[cl] = next(others, None)
    markers = {}
    for m in sorted({p[2] for p in pts}):
        markers[m] = "os^Dv"[len(markers) % 5]
    for cl in sorted({p[3] for p in pts}):
        for m in markers:
            sel = [p for p in pts if p[3] == cl and p[2] == m]
            if sel:
                ax.scatter([p[0] for p in sel], [p[1] for p in sel], s=16, marker=markers[m],
                           color=colors.get(cl), alpha=0.75, label=f"{m} on {cl}")
    lo = min(min(p[0], p[1]) for p in pts) * 0.7
    hi = max(max(p[0], p[1]) for p in pts) * 1.4
    ax.plot([lo, hi], [lo, hi], color="black", lw=1, label="y = x")
    ax.fill_between([lo, hi], [lo * 0.9, hi * 0.9], [lo * 1.1, hi * 1.1], color="gray", alpha=0.15, label="+-10%")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("analytical iteration (ms)")
    ax.set_ylabel("simulated iteration (ms)")
    ax.set_title(f"SimGrid vs analytical model, {len(pts)} schemes", fontsize=9)
    ax.legend(fontsize=7)
    rel = [(p[1] - p[0]) / p[0] for p in pts]
    within = sum(1 for x in rel if abs(x) <= 0.10)
    print(f"{len(pts)} schemes: median |sim - analytical| / analytical {100 * statistics.median(abs(x) for x in rel):.1f}%, "
          f"max {100 * max(abs(x) for x in rel):.1f}%, within 10%: {within}/{len(pts)}")
    worst = sorted(zip(rel, pts), key=lambda t: -abs(t[0]))[:5]
    for x, p in worst:
        print(f"  {100 * x:+6.1f}%  {p[2]} on {p[3]} {p[4]} GPUs, {p[5]}: analytical {p[0]:.2f} ms, simulated {p[1]:.2f} ms")


def main():
    a = figure_parser(__doc__, "sim_vs_analytical").parse_args()
    pts = parity_points(load_rows(a.sweep))
    if not pts:
        sys.exit(f"{a.sweep}: no sim cells with results")
    fig, ax = plt.subplots(figsize=(5, 4.4))
    draw_parity(ax, pts)
    fig.tight_layout()
    save(fig, a.out, a.name)


if __name__ == "__main__":
    main()
