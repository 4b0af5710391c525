#!/usr/bin/python3
"""AutoSync figures from a sweep of sync_search cells (AutoSync's low-shot search on the simulator):

  autosync_speedup: per model on each cluster, the best strategy found against every hand-made
    builder, the fp16-compressed ones (horovod-fp16, ddp-fp16) included (the builder's iteration
    time / the best found's; 1.0 = the builder is as fast), log y; the printed summary adds the
    comparison with compression off (lossy fp16 on neither side);
  autosync_trials: what the search would report had it stopped after n trials (the builders and
    the final selection of the first n trials, each the mean of the same repeated runs with common
    seeds), relative to the best builder, against n: 1 until the search finds a strategy faster
    than every builder (below 1), and its last point is the reported speedup.

  experiments/figures/autosync.py SWEEP_DIR --out docs/figures

  autosync.md: the table README quotes: per (model, cluster), the GPUs and global batch the search
    ran (AutoSync's per-replica batch x GPUs, sync/workload.hpp), the best found against the best
    builder with the same options and with compression off, and the AutoSync paper's claim beside
    the models it names.

Reads sweep results only (the sync_search report's `trial_curve_s`). A curve of the best single
jittered run so far would drift below 1 by selection alone; this one cannot."""
import argparse
import sys

import matplotlib.pyplot as plt
import numpy as np

from sweeplib import load_rows, save


def label(inputs):
    knobs = inputs.get("knobs", {})
    extra = ",".join(f"{k}={v}" for k, v in sorted(knobs.items()))
    return inputs["model"] + (f" ({extra})" if extra else "")


# The AutoSync paper (NeurIPS 2020) gives one range over three models, not a number per model
# (reference/autosync.md: "1.2x-1.6x on NCF, BERT, VGG16").
PAPER_CLAIM = {m: "1.2–1.6x (one range over VGG16, BERT, NCF)" for m in ("vgg16", "bert", "ncf")}


def compression_off(rep, with_builder=False):
    """The compression-off comparison of a sync_search report, as the tables print it."""
    off = rep.get("compression_off")
    if not off:
        return "none uncompressed"
    return f"{off['speedup_over_best_builder']:.2f}x" + (f" ({off['best_builder']['builder']})" if with_builder else "")


def paper_claim(name):
    return PAPER_CLAIM.get(name.split(" ")[0], "—")


def markdown_table(cells):
    """Per (model, cluster): the workload, both comparisons, the paper beside them."""
    lines = ["| model | cluster | GPUs | global batch | best found | same options: vs best builder | "
             "compression off: vs best builder | AutoSync paper |", "|---|---|---|---|---|---|---|---|"]
    for cl in sorted(cells):
        for name, rep in sorted(cells[cl], key=lambda x: x[0]):
            knobs = rep.get("knobs") or {}
            gpus = rep.get("gpus")
            batch = knobs.get("batch", "?")
            per = f" ({int(batch) // gpus} per GPU)" if gpus and batch.isdigit() and int(batch) % gpus == 0 else ""
            seq = f", seq {knobs['seq']}" if "seq" in knobs else ""
            lossy = " fp16, lossy" if rep["best"].get("lossy") else ""
            lines.append(f"| {name} | {cl} | {gpus} | {batch}{per}{seq} | {rep['best']['mean_s'] * 1e3:.2f} ms{lossy} | "
                         f"{rep['speedup_over_best_builder']:.2f}x ({rep['best_builder']['builder']}) | "
                         f"{compression_off(rep, True)} | {paper_claim(name)} |")
    return "\n".join(lines) + "\n"


def compact_table(cells):
    """README's form of the same numbers: a row per model, both comparisons per cluster."""
    clusters = sorted(cells)
    by = {(cl, name): rep for cl in clusters for name, rep in cells[cl]}
    gpus = {cl: cells[cl][0][1].get("gpus") for cl in clusters}
    lines = ["| model | " + " | ".join(f"{cl} ({gpus[cl]} GPUs): same options / compression off" for cl in clusters) +
             " | AutoSync paper |", "|---|" + "---|" * len(clusters) + "---|"]
    for name in sorted({n for (_, n) in by}):
        cols = [f"{by[cl, name]['speedup_over_best_builder']:.2f}x / {compression_off(by[cl, name])}"
                if (cl, name) in by else "not run" for cl in clusters]
        lines.append(f"| {name} | " + " | ".join(cols) + f" | {paper_claim(name)} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sweep")
    ap.add_argument("--out", default="docs/figures")
    a = ap.parse_args()
    cells = {}  # cluster -> [(model label, report)]
    for r in load_rows(a.sweep):
        i = r["inputs"]
        if i.get("task") != "sync_search":
            continue
        cells.setdefault(i["cluster"], []).append((label(i), r["results"]["sync_search"]))
    if not cells:
        sys.exit(f"{a.sweep}: no sync_search cells with results")
    clusters = sorted(cells)
    with open(f"{a.out}/autosync.md", "w", encoding="utf-8") as fh:
        fh.write("Per model (README's table): the best found over the best builder with the same options "
                 "(fp16-compressed builders included) / with compression off on both sides.\n\n")
        fh.write(compact_table(cells))
        fh.write("\nPer (model, cluster), with the workload each search ran and the builder it is compared "
                 "with:\n\n")
        fh.write(markdown_table(cells))
    builders = sorted({b["builder"] for rows in cells.values() for _, rep in rows for b in rep["builders"]})

    fig, axes = plt.subplots(len(clusters), 1, figsize=(9, 3.0 * len(clusters)), squeeze=False)
    cmap = plt.get_cmap("tab20")  # 11 builders: tab10 would repeat a colour
    print(f"{'model':22} {'cluster':11} {'best found':>11} {'':13} {'vs best builder':>16}  best builder")
    for ax, cl in zip(axes[:, 0], clusters):
        rows = sorted(cells[cl], key=lambda x: x[0])
        x = np.arange(len(rows))
        w = 0.85 / len(builders)
        for k, b in enumerate(builders):
            ys = []
            for _, rep in rows:
                t = {e["builder"]: e["mean_s"] for e in rep["builders"]}.get(b)
                ys.append(t / rep["best"]["mean_s"] if t else np.nan)
            ax.bar(x + (k - (len(builders) - 1) / 2) * w, ys, w, label=b, color=cmap(k % 20))
        for name, rep in rows:
            # Same options (every builder, fp16 ones included), then compression off (issue 32).
            sp = rep["speedup_over_best_builder"]
            off = rep.get("compression_off") or {}
            off_text = (f"  compression off {off['speedup_over_best_builder']:.2f}x vs {off['best_builder']['builder']}"
                        if off else "")
            lossy = "(fp16, lossy)" if rep["best"].get("lossy") else ""
            print(f"{name:22} {cl:11} {rep['best']['mean_s'] * 1e3:9.2f}ms {lossy:13} {sp:15.2f}x  "
                  f"{rep['best_builder']['builder']}{off_text}")
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_yscale("log")
        ax.set_xticks(x, [f"{n}\n{rep['speedup_over_best_builder']:.2f}x" for n, rep in rows], fontsize=7)
        ax.set_ylabel("builder time / best found")
        ax.set_title(f"AutoSync low-shot search vs hand-made builders on {cl} (under each model: vs the best builder)",
                     fontsize=9)
    axes[0, 0].legend(fontsize=6, ncol=5, loc="upper left", bbox_to_anchor=(0, 1.45))
    fig.tight_layout()
    save(fig, a.out, "autosync_speedup")

    fig, axes = plt.subplots(1, len(clusters), figsize=(4.5 * len(clusters), 3.2), squeeze=False)
    for ax, cl in zip(axes[0], clusters):
        for k, (name, rep) in enumerate(sorted(cells[cl], key=lambda x: x[0])):
            curve = rep.get("trial_curve_s")
            if not curve:
                sys.exit(f"{a.sweep}: {name} on {cl}: no trial_curve_s (a sweep from before it; rerun it)")
            best = np.array(curve) / rep["best_builder"]["mean_s"]
            # The curve's end is the reported speedup, by construction: say so if it is not.
            if abs(1 / best[-1] - rep["speedup_over_best_builder"]) > 1e-9 * rep["speedup_over_best_builder"]:
                sys.exit(f"{name} on {cl}: the trial curve ends at {1 / best[-1]:.4f}x, the report says "
                         f"{rep['speedup_over_best_builder']:.4f}x")
            ax.plot(np.arange(1, len(best) + 1), best, label=name, color=cmap(k % 20), linewidth=1)
        ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
        # Linear: the curves stay within a few tens of percent of 1 (a log axis only garbles the ticks).
        ax.set_xlabel("sampled strategies run on the simulator")
        ax.set_ylabel("reported if stopped here / best builder")
        ax.set_title(cl, fontsize=9)
    axes[0, -1].legend(fontsize=6)
    fig.tight_layout()
    save(fig, a.out, "autosync_trials")


if __name__ == "__main__":
    main()
