#!/usr/bin/python3
"""AutoDDL figure: iteration time of the searched scheme against the expert schemes, per model,
on a multi-node single-GPU cluster (piz-daint) and a multi-node multi-GPU cluster (dgx-a100),
over the GPU counts of the sweep, with the searched scheme's speedup over the best feasible
expert printed on its bar.

  experiments/figures/autoddl_speedup.py SWEEP_DIR --experts megatron,dp --name NAME --out docs/figures

SWEEP_DIR holds search cells whose --method lists the searched methods (cd-nbh, cd-mesh) and the
experts; "searched" is the fastest feasible searched method of each cell."""
import os
import sys

import matplotlib.pyplot as plt
import numpy as np

from sweeplib import SEARCHED, figure_parser, load_rows, save

LABELS = {"megatron": "Megatron-LM (best grid point)", "dp": "data parallel", "owt": "one weird trick",
          "zero1": "ZeRO-1", "zero3": "ZeRO-3"}


def main():
    ap = figure_parser(__doc__)
    ap.add_argument("--experts", default="megatron,dp")
    a = ap.parse_args()
    experts = a.experts.split(",")
    # (model, cluster) -> gpus -> {"searched": (s, method), expert: s}
    table = {}
    for r in load_rows(a.sweep):
        i = r["inputs"]
        if i.get("task") != "search":
            continue
        res = {x["method"]: x for x in r["results"]["search"]["results"]}
        feas = {m: x["iteration_s"] for m, x in res.items() if x.get("feasible") and x.get("iteration_s")}
        searched = [(t, m) for m, t in feas.items() if m in SEARCHED]
        if not searched:
            continue
        cell = {"searched": min(searched)}
        for e in experts:
            cell[e] = feas.get(e)  # None = infeasible or not applicable
        # A cluster file is named by its stem (experiments/clusters/dgx1-v100-1nic.json -> dgx1-v100-1nic).
        cluster = os.path.splitext(os.path.basename(i["cluster"]))[0]
        table.setdefault((i["model"], cluster), {})[i["gpus"]] = cell
    if not table:
        sys.exit(f"{a.sweep}: no search cells with results")
    keys = sorted(table, key=lambda k: (k[0], k[1] != "piz-daint", k[1]))
    fig, axes = plt.subplots(len(keys), 1, figsize=(7.5, 2.6 * len(keys)), squeeze=False)
    series = ["searched"] + experts
    colors = {"searched": "#d62728", "megatron": "#1f77b4", "dp": "#7f7f7f", "owt": "#2ca02c",
              "zero1": "#9467bd", "zero3": "#8c564b"}
    print(f"{'model':8} {'cluster':10} {'GPUs':>5} {'searched':>11} " + " ".join(f"{e:>11}" for e in experts) +
          "  speedup vs best expert" + "".join(f", vs {e}" for e in experts))
    for ax, key in zip(axes[:, 0], keys):
        gpus = sorted(table[key])
        x = np.arange(len(gpus))
        w = 0.8 / len(series)
        heights = []
        for k, s in enumerate(series):
            ys = []
            for g in gpus:
                v = table[key][g].get(s)
                ys.append((v[0] if s == "searched" else v) * 1e3 if v else 0)
            label = "searched (AutoDDL CD)" if s == "searched" else LABELS.get(s, s)
            xs = x + (k - (len(series) - 1) / 2) * w
            ax.bar(xs, ys, w, label=label, color=colors.get(s))
            heights += [y for y in ys if y > 0]
            # A scheme that does not fit (or does not apply) is marked, not left out silently.
            for xi, y in zip(xs, ys):
                if y == 0:
                    ax.text(xi, 0, "x", ha="center", va="bottom", fontsize=7, color=colors.get(s))
        for j, g in enumerate(gpus):
            c = table[key][g]
            t, m = c["searched"]
            best = min((c[e] for e in experts if c.get(e)), default=None)
            ex = " ".join(f"{c[e] * 1e3:8.2f} ms" if c.get(e) else f"{'infeasible':>11}" for e in experts)
            sp = f"{best / t:.2f}x" if best else "-"
            per = "".join(f", {c[e] / t:.2f}x" if c.get(e) else ", -" for e in experts)
            print(f"{key[0]:8} {key[1]:10} {g:5d} {t * 1e3:8.2f} ms {ex}  {sp}{per} ({m})")
            if best:
                ax.text(x[j] - (len(series) - 1) / 2 * w, t * 1e3, f"{best / t:.2f}x", ha="center", va="bottom",
                        fontsize=7, rotation=90)
        ax.set_xticks(x, [str(g) for g in gpus])
        ax.set_title(f"{key[0]} on {key[1]}", fontsize=9)
        # Times spanning more than a decade on one panel would leave the short bars invisible.
        if heights and max(heights) > 10 * min(heights):
            ax.set_yscale("log")
            ax.set_ylim(min(heights) / 2, max(heights) * 4)
            ax.set_ylabel("iteration (ms, log)")
        else:
            ax.set_ylim(0, ax.get_ylim()[1] * 1.15)
            ax.set_ylabel("iteration (ms)")
    axes[-1, 0].set_xlabel("GPUs (x on the axis: the scheme does not fit or does not apply)")
    axes[0, 0].legend(fontsize=7, ncol=len(series), loc="upper left", bbox_to_anchor=(0, 1.35))
    fig.tight_layout()
    save(fig, a.out, a.name)


if __name__ == "__main__":
    main()
