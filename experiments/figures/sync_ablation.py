#!/usr/bin/python3
"""AutoSync ablation, "does learning help?" (issue 32 item 4), from a sweep of sync_search cells
with arms (experiments/configs/autosync_ablation.json): at equal trials, from the same
knowledge-guided candidates, the searches whose runs a learned ranker picks (linear, XGBoost;
round 1 by the analytical evaluator, as AutoSync), random picks, and the analytical evaluator
every round; each with and without the neighbours of the 5 fastest runs (not AutoSync's).

Printed (markdown): per arm, the best found over the best builder (the report's
speedup_over_best_builder; 1.00x = nothing beat the builders) as the geometric mean over pairs
of the mean over seeds, with the spread (the smallest and largest cell, and the standard
deviation over seeds averaged over pairs); the best found relative to the random arm's with
the same pair, seed and neighbours (paired: < 1 is faster than random), and in how many cells
it is faster, as fast, slower; the learned ranker's pairwise accuracy on its picks, per round;
then the table per pair. The verdict line says whether a learned ranker beats random picks at
the trial budget the sweep ran (200 in the config), where a two-sided sign test over the paired
cells that differ gives p < 0.05; otherwise that there is no significant difference.

Figure autosync_ablation: left, what the search would report had it stopped after n trials
over the best builder (geometric mean over pairs and seeds; band: the 10th to 90th percentile of
the cells), one line per arm; right, the pairwise accuracy on each round's picks (mean over
cells; the random arm's is its shadow ranker's on random picks).

  experiments/figures/sync_ablation.py SWEEP_DIR --out docs/figures"""
import math
import sys
from collections import defaultdict

import matplotlib.pyplot as plt
import numpy as np

from sweeplib import figure_parser, load_rows, save

ARM_ORDER = ["ranker:linear", "ranker:xgboost", "ranker:lstm", "random", "analytical"]
COLORS = {"ranker:linear": "#1f77b4", "ranker:xgboost": "#d62728", "random": "#7f7f7f",
          "analytical": "#2ca02c"}


def pair_label(inputs):
    knobs = inputs.get("knobs", {})
    extra = ",".join(f"{k}={v}" for k, v in sorted(knobs.items()))
    return inputs["model"] + (f"[{extra}]" if extra else "") + "@" + inputs["cluster"]


def arm_label(inputs):
    arm = inputs["arm"]
    return f"ranker:{inputs.get('ranker', 'linear')}" if arm == "ranker" else arm


def gmean(xs):
    xs = np.asarray(xs, dtype=float)
    return float(np.exp(np.mean(np.log(xs)))) if len(xs) else float("nan")


def sign_test(wins, losses):
    """Two-sided exact sign test over the cells that differ (ties left out)."""
    n = wins + losses
    if n == 0:
        return 1.0
    k = min(wins, losses)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n)


def order_key(arm):
    return ARM_ORDER.index(arm) if arm in ARM_ORDER else len(ARM_ORDER)


def main():
    a = figure_parser(__doc__, "autosync_ablation").parse_args()
    # (neighbours, arm) -> {(pair, seed): report}
    cells = defaultdict(dict)
    for r in load_rows(a.sweep):
        i = r["inputs"]
        if i.get("task") != "sync_search" or "arm" not in i:
            continue
        nb = i["options"].get("neighbours", True)
        cells[(nb, arm_label(i))][(pair_label(i), i["seed"])] = r["results"]["sync_search"]
    if not cells:
        sys.exit(f"{a.sweep}: no sync_search cells with an arm (a sweep of experiments/configs/autosync_ablation.json)")
    trials = sorted({rep["trials"] for per in cells.values() for rep in per.values()})
    groups = sorted({nb for nb, _ in cells}, reverse=True)
    verdicts = []
    for nb in groups:
        arms = sorted((arm for g, arm in cells if g == nb), key=order_key)
        random = cells.get((nb, "random"), {})
        title = "with neighbours of the 5 fastest (not AutoSync's)" if nb else "AutoSync's sampler only (--sampler-only)"
        pairs_all = sorted({p for arm in arms for p, _ in cells[(nb, arm)]})
        seeds_all = sorted({s for arm in arms for _, s in cells[(nb, arm)]})
        print(f"## {title}: {len(pairs_all)} pairs x {len(seeds_all)} seeds, {', '.join(map(str, trials))} trials\n")
        full = {(p, sd) for p in pairs_all for sd in seeds_all}
        missing = {arm: len(full - set(cells[(nb, arm)])) for arm in arms}
        if any(missing.values()):  # a sweep still running: the arms' means cover other cells
            print("incomplete: cells missing per arm: " + ", ".join(f"{a} {n}" for a, n in missing.items() if n) +
                  " (the paired columns compare only cells both arms have)\n")
        print("| arm | cells | best found / best builder: geomean over pairs | min | max | sd over seeds | "
              "best found / random's (paired) | faster / same / slower than random | accuracy on picks, rounds 2+ |")
        print("|---|---|---|---|---|---|---|---|---|")
        for arm in arms:
            per = cells[(nb, arm)]
            by_pair = defaultdict(list)
            for (pair, seed), rep in per.items():
                by_pair[pair].append(rep["speedup_over_best_builder"])
            speed = gmean([np.mean(v) for v in by_pair.values()])
            flat = [x for v in by_pair.values() for x in v]
            sd = np.mean([np.std(v) for v in by_pair.values()])
            ratios, faster, same, slower = [], 0, 0, 0
            for k, rep in per.items():
                if k not in random:
                    continue
                q = rep["best"]["mean_s"] / random[k]["best"]["mean_s"]
                ratios.append(q)
                faster += q < 1 - 1e-9
                slower += q > 1 + 1e-9
                same += abs(q - 1) <= 1e-9
            acc = [st["accuracy"] for rep in per.values() for st in rep.get("round_stats", [])
                   if st["round"] >= 2 and st.get("accuracy") is not None]
            rel = "—" if arm == "random" or not ratios else f"{gmean(ratios):.4f}"
            fss = "—" if arm == "random" or not ratios else f"{faster} / {same} / {slower}"
            acc_text = f"{np.mean(acc):.3f}" if acc else "—"
            print(f"| {arm} | {len(per)} | {speed:.3f}x | {min(flat):.3f}x | {max(flat):.3f}x | {sd:.3f} | {rel} | "
                  f"{fss} | {acc_text} |")
            if arm.startswith("ranker:") and ratios:
                verdicts.append((nb, arm, gmean(ratios), faster, same, slower))
        print()
        # per pair: mean speedup over seeds of each arm
        print("| pair | " + " | ".join(arms) + " |")
        print("|---|" + "---|" * len(arms))
        for pair in pairs_all:
            row = []
            for arm in arms:
                v = [rep["speedup_over_best_builder"] for (p, _), rep in cells[(nb, arm)].items() if p == pair]
                row.append(f"{np.mean(v):.3f}x ±{np.std(v):.3f}" if v else "—")
            print(f"| {pair} | " + " | ".join(row) + " |")
        print()
    print(f"Speedups: the best found over the best builder (builders included, so >= 1.00x); mean over seeds "
          f"± its standard deviation; trial budget {', '.join(map(str, trials))}.\n")
    # Plain words only where a sign test over the paired cells says so (p < 0.05): a few cells a
    # fraction of a percent apart are run-to-run noise of the final re-runs, not a verdict.
    for nb, arm, ratio, faster, same, slower in verdicts:
        p = sign_test(faster, slower)
        if p < 0.05:
            word = "beats" if faster > slower else "is beaten by"
        else:
            word = "does not beat (no significant difference from)"
        print(f"verdict ({'with neighbours' if nb else 'sampler only'}): {arm} {word} random picks at "
              f"{', '.join(map(str, trials))} trials: best found {ratio:.4f}x of random's (geomean, paired), "
              f"faster in {faster}, as fast in {same}, slower in {slower} cells (sign test p = {p:.3g})")

    fig, axes = plt.subplots(len(groups), 2, figsize=(10, 3.4 * len(groups)), squeeze=False)
    for row, nb in enumerate(groups):
        ax, ax2 = axes[row]
        arms = sorted((arm for g, arm in cells if g == nb), key=order_key)
        for k, arm in enumerate(arms):
            curves = []
            for rep in cells[(nb, arm)].values():
                c = rep.get("trial_curve_s")
                if c:
                    curves.append(np.asarray(c) / rep["best_builder"]["mean_s"])
            n = min(len(c) for c in curves)
            m = np.log(np.array([c[:n] for c in curves]))
            x = np.arange(1, n + 1)
            color = COLORS.get(arm, plt.get_cmap("tab10")(k))
            ax.plot(x, np.exp(m.mean(axis=0)), label=arm, color=color, linewidth=1.2)
            ax.fill_between(x, np.exp(np.percentile(m, 10, axis=0)), np.exp(np.percentile(m, 90, axis=0)),
                            color=color, alpha=0.12, linewidth=0)
            per_round = defaultdict(list)
            for rep in cells[(nb, arm)].values():
                for st in rep.get("round_stats", []):
                    if st.get("accuracy") is not None:
                        per_round[st["round"]].append(st["accuracy"])
            if per_round:
                rounds = sorted(per_round)
                ax2.plot(rounds, [np.mean(per_round[r]) for r in rounds], marker="o", markersize=3, label=arm,
                         color=color, linewidth=1)
        ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
        ax.set_xlabel("sampled strategies run on the simulator")
        ax.set_ylabel("reported if stopped here / best builder")
        ax.set_title(("with neighbours" if nb else "sampler only") + ": geomean over pairs and seeds", fontsize=9)
        ax.legend(fontsize=7)
        ax2.axhline(0.5, color="black", linewidth=0.8, linestyle="--")
        ax2.set_xlabel("round")
        ax2.set_ylabel("pairwise accuracy on the round's picks")
        ax2.set_title("scores of what ranked (random: its shadow ranker)", fontsize=9)
        ax2.legend(fontsize=7)
    fig.tight_layout()
    save(fig, a.out, a.name)


if __name__ == "__main__":
    main()
