#!/usr/bin/python3
"""AutoSync figure: the transfer matrix, from a sweep of sync_transfer cells (each: a ranker
trained on the records of one (model, cluster) pair of a dataset, or the sweep's train_trials of
them, tested on another pair's records). Rows: the pair trained on; columns: the pair tested on; colour: held-out pairwise accuracy
(mean over seeds; the numbers are printed). Left: the transferred ranker alone (no target trials);
right: the transferred ranker fine-tuned on a few target trials (the source ranker trained further
on them, Ranker::fine_tune; sync/transfer.hpp; sweeps from before issue 32 item 4 held the
ensemble under this key, its scores plus those of a ranker trained on the target trials alone,
both standardized, now the cells' `ensemble`). The last row
of both is the ranker trained on the target trials alone, the baseline transfer must beat. One
row of panels per ranker. Every number of a column scores the same test records.

  experiments/figures/sync_transfer.py SWEEP_DIR --out docs/figures"""
import sys
from collections import defaultdict

import matplotlib.pyplot as plt
import numpy as np

from sweeplib import figure_parser, load_rows, save


def short(pair):
    model, cluster = pair.rsplit("@", 1)
    return model.replace("[size=large]", "-large") + "@" + cluster.replace("autosync-", "")


def main():
    a = figure_parser(__doc__, "autosync_transfer").parse_args()
    vals = defaultdict(list)  # (ranker, variant, train, test) -> accuracies over seeds
    finetune = set()
    for r in load_rows(a.sweep):
        i = r["inputs"]
        if i.get("task") != "sync_transfer":
            continue
        t = r["results"]["sync_transfer"]
        finetune.add(i["options"]["finetune"])
        for variant in ("transferred", "finetuned", "target_only"):
            if variant in t:
                train = "target only" if variant == "target_only" else t["train_pair"]
                vals[(i["ranker"], variant, train, t["test_pair"])].append(t[variant]["pairwise_accuracy"])
    if not vals:
        sys.exit(f"{a.sweep}: no sync_transfer cells with results")
    rankers = sorted({k[0] for k in vals})
    pairs = sorted({k[3] for k in vals}, key=lambda p: (p.rsplit("@", 1)[1], p))  # by cluster, then model
    k = max(finetune)
    variants = [("transferred", "no target trials")]
    if any(key[1] == "finetuned" for key in vals):
        variants.append(("finetuned", f"+ {k} target trials (fine-tuned)"))
    rows = pairs + ["target only"]
    fig, axes = plt.subplots(len(rankers), len(variants), figsize=(4.6 * len(variants) + 1.2, 4.8 * len(rankers)),
                             squeeze=False, constrained_layout=True)
    matrices = {}
    for ri, ranker in enumerate(rankers):
        for vi, (variant, title) in enumerate(variants):
            ax = axes[ri, vi]
            m = np.full((len(rows), len(pairs)), np.nan)
            for a_i, train in enumerate(rows):
                v = "target_only" if train == "target only" else variant
                for b_i, test in enumerate(pairs):
                    x = vals.get((ranker, v, train, test))
                    if x:
                        m[a_i, b_i] = np.mean(x)
            matrices[(ranker, title)] = m
            im = ax.imshow(m, vmin=0.5, vmax=1.0, cmap="viridis", aspect="auto", interpolation="nearest")
            ax.axhline(len(pairs) - 0.5, color="white", linewidth=2)
            ax.set_xticks(range(len(pairs)), [short(p) for p in pairs], rotation=90, fontsize=6)
            ax.set_yticks(range(len(rows)), [short(p) if p != "target only" else f"{k} target only" for p in rows]
                          if vi == 0 else [], fontsize=6)
            ax.grid(False)
            ax.set_title(f"{ranker}: {title}", fontsize=9)
            if vi == 0:
                ax.set_ylabel("trained on")
            if ri == len(rankers) - 1:
                ax.set_xlabel("tested on")
    fig.colorbar(im, ax=axes, shrink=0.5, label="held-out pairwise accuracy (0.5 and below: a coin or worse)")
    save(fig, a.out, a.name)

    # Numbers: means over kinds of transfer (same cluster / same model / neither), and per column.
    def kind(train, test):
        (tm, tc), (sm, sc) = train.rsplit("@", 1), test.rsplit("@", 1)
        return "same model, other cluster" if tm == sm else "other model, same cluster" if tc == sc else \
            "other model, other cluster"
    print(f"pairwise accuracy on held-out records (mean over cells and seeds); target trials: {k} per test pair")
    print(f"{'ranker':8} {'trained on':28} {'no target trials':>17} {'fine-tuned':>11}")
    for ranker in rankers:
        groups = defaultdict(lambda: defaultdict(list))
        for (r, variant, train, test), x in vals.items():
            if r == ranker and train != "target only":
                groups[kind(train, test)][variant].append(np.mean(x))
        for g in ("same model, other cluster", "other model, same cluster", "other model, other cluster"):
            ft = groups[g]["finetuned"]
            print(f"{ranker:8} {g:28} {np.mean(groups[g]['transferred']):17.3f} "
                  f"{np.mean(ft) if ft else float('nan'):11.3f}")
        own = [np.mean(x) for (r, v, _, _), x in vals.items() if r == ranker and v == "target_only"]
        if own:
            print(f"{ranker:8} {f'{k} target trials only':28} {'':17} {np.mean(own):11.3f}")
    print(f"\nper test pair: best source (no target trials), mean over sources, {k} target trials only, fine-tuned mean")
    for ranker in rankers:
        for test in pairs:
            src = {tr: np.mean(x) for (r, v, tr, te), x in vals.items()
                   if r == ranker and v == "transferred" and te == test}
            ft = [np.mean(x) for (r, v, tr, te), x in vals.items() if r == ranker and v == "finetuned" and te == test]
            own = vals.get((ranker, "target_only", "target only", test))
            best = max(src, key=src.get)
            print(f"{ranker:8} {short(test):18} {short(best):18} {src[best]:.3f} {np.mean(list(src.values())):.3f} "
                  f"{np.mean(own) if own else float('nan'):.3f} {np.mean(ft) if ft else float('nan'):.3f}")

    print("\nthe matrices (x100; rows: trained on, in the columns' order, then the target trials only; "
          "columns: tested on)")
    print(" ".join(short(p) for p in pairs))
    for (ranker, title), m in matrices.items():
        print(f"{ranker}: {title}")
        for a_i, train in enumerate(rows):
            cells_text = " ".join("  -" if np.isnan(x) else f"{100 * x:3.0f}" for x in m[a_i])
            print(f"  {short(train) if train != 'target only' else 'target only':18} {cells_text}")


if __name__ == "__main__":
    main()
