#!/usr/bin/python3
"""AutoSync figure: held-out accuracy of a learned ranker against the number of trials it trained
on, from a sweep of sync_rank cells (each: one ranker trained on N simulated trials of one
(model, cluster) pair of a dataset, scored on the pair's held-out records). Left: pairwise
accuracy over all held-out pairs; middle: over the pairs at least 5% apart (closer pairs are
within one run's noise); right: the runtime of the held-out strategy the ranker puts first over
that of the fastest held-out one (1 + top-1 regret). One line per ranker and cluster, the mean
over the sweep's models and then over seeds (geometric for the runtime ratio); error bars: the
spread (standard deviation, of the logs for the ratio) of the models' mean over seeds, each seed another held-out split and draw of trials. The
numbers per model are printed.

  experiments/figures/sync_ranker_accuracy.py SWEEP_DIR --out docs/figures"""
import sys
from collections import defaultdict

import matplotlib.pyplot as plt
import numpy as np

from sweeplib import figure_parser, load_rows, save

COLORS = {"linear": "#1f77b4", "xgboost": "#d62728"}
MARKERS = {0: "o", 1: "s", 2: "^", 3: "D"}


def main():
    a = figure_parser(__doc__, "autosync_ranker_accuracy").parse_args()
    # (ranker, cluster, trials, seed) -> {pair: result}
    cells = defaultdict(dict)
    for r in load_rows(a.sweep):
        i = r["inputs"]
        if i.get("task") != "sync_rank":
            continue
        res = r["results"]["sync_rank"]
        cells[(i["ranker"], i["cluster"], res["trials"], i["seed"])][res["pair"]] = res
    if not cells:
        sys.exit(f"{a.sweep}: no sync_rank cells with results")
    rankers = sorted({k[0] for k in cells})
    clusters = sorted({k[1] for k in cells})
    trials = sorted({k[2] for k in cells})
    seeds = sorted({k[3] for k in cells})
    metrics = [("pairwise_accuracy", "held-out pairwise accuracy"),
               ("gap_pairwise_accuracy", "accuracy, pairs >= 5% apart"),
               ("top1_ratio", "ranked first / fastest held-out")]

    def seed_means(ranker, cluster, n, metric):
        """Per seed, the mean over the pairs (models) of one metric (geometric for top1_ratio)."""
        out = []
        for s in seeds:
            per_pair = cells.get((ranker, cluster, n, s), {})
            if not per_pair:
                continue
            if metric == "top1_ratio":
                out.append(np.exp(np.mean([np.log1p(p["held_out_metrics"]["top1_regret"]) for p in per_pair.values()])))
            else:
                out.append(np.mean([p["held_out_metrics"][metric] for p in per_pair.values()]))
        return out

    fig, axes = plt.subplots(1, 3, figsize=(12, 3.4))
    for ax, (metric, ylabel) in zip(axes, metrics):
        for ranker in rankers:
            for ci, cluster in enumerate(clusters):
                xs, ys, es = [], [], []
                for n in trials:
                    v = seed_means(ranker, cluster, n, metric)
                    if not v:
                        continue
                    xs.append(n)
                    if metric == "top1_ratio":  # geometric: mean and spread of the logs
                        g, sd = np.exp(np.mean(np.log(v))), np.exp(np.std(np.log(v)))
                        ys.append(g)
                        es.append((g - g / sd, g * sd - g))
                    else:
                        ys.append(np.mean(v))
                        es.append((np.std(v), np.std(v)))
                ax.errorbar(xs, ys, yerr=np.array(es).T, color=COLORS.get(ranker, "black"), marker=MARKERS.get(ci, "x"),
                            markersize=4, linewidth=1, capsize=2, linestyle="-" if ci == 0 else "--",
                            label=f"{ranker}, {cluster}")
        ax.set_xscale("log")
        ax.set_xticks(trials, [str(n) for n in trials])
        ax.minorticks_off()
        ax.set_xlabel("training trials (simulated runs of the pair)")
        ax.set_ylabel(ylabel)
    axes[0].legend(fontsize=7)
    models = len({p for v in cells.values() for p in v}) // max(1, len(clusters))
    fig.suptitle(f"AutoSync ranker trained on N trials of one (model, cluster) pair, scored on held-out strategies "
                 f"(mean over {models} models; error bars: std over {len(seeds)} seeds)", fontsize=9)
    fig.tight_layout()
    save(fig, a.out, a.name)

    # Numbers: the means plotted, then every pair at the largest N.
    print(f"{'ranker':8} {'cluster':11} {'trials':>6} {'accuracy':>9} {'+-':>6} {'>=5%':>7} {'top1/best':>9} "
          f"{'top-5 hit':>9}")
    for ranker in rankers:
        for cluster in clusters:
            for n in trials:
                acc = seed_means(ranker, cluster, n, "pairwise_accuracy")
                gap = seed_means(ranker, cluster, n, "gap_pairwise_accuracy")
                reg = seed_means(ranker, cluster, n, "top1_ratio")
                hits = [p["top5_hit"] for s in seeds for p in cells.get((ranker, cluster, n, s), {}).values()]
                if acc:
                    print(f"{ranker:8} {cluster:11} {n:6d} {np.mean(acc):9.3f} {np.std(acc):6.3f} {np.mean(gap):7.3f} "
                          f"{np.exp(np.mean(np.log(reg))):9.3f} {np.mean(hits):9.2f}")
    top = trials[-1]
    print(f"\nper pair at {top} trials (mean over seeds): pairwise accuracy all / >=5% apart, top-1 regret %")
    for ranker in rankers:
        pairs = sorted({p for (r, _, n, _), v in cells.items() if r == ranker and n == top for p in v})
        for pair in pairs:
            res = [cells[(ranker, c, top, s)][pair] for c in clusters for s in seeds
                   if pair in cells.get((ranker, c, top, s), {})]
            m = lambda k, f=1: f * np.mean([x["held_out_metrics"][k] for x in res])  # noqa: E731
            print(f"{ranker:8} {pair:30} {m('pairwise_accuracy'):6.3f} {m('gap_pairwise_accuracy'):6.3f} "
                  f"{m('top1_regret', 100):6.2f}")


if __name__ == "__main__":
    main()
