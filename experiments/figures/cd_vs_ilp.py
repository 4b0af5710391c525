#!/usr/bin/python3
"""AutoDDL figure: coordinate descent against the exact ILP optimum on graphs of growing size.
Left: the objective gap of plain and neighbourhood CD to the ILP (the search tables' additive
objective, which the ILP optimizes exactly; relative to the ILP's bound). Right: search time
against graph size (ops), log-log, CD beside the ILP (COIN-OR CBC); an open marker is an ILP
that hit its time limit (its gap is then against the best bound CBC proved).

  experiments/figures/cd_vs_ilp.py SWEEP_DIR --out docs/figures"""
import sys

import matplotlib.pyplot as plt

from sweeplib import figure_parser, load_rows, save

STYLE = {"cd": ("#ff7f0e", "s", "coordinate descent"), "cd-nbh": ("#d62728", "o", "CD with neighbourhoods"),
         "ilp": ("#1f77b4", "^", "ILP (CBC)")}


def main():
    a = figure_parser(__doc__, "cd_vs_ilp").parse_args()
    pts = []  # (ops, model, knobs, {method: result})
    for r in load_rows(a.sweep):
        s = r["results"].get("search")
        if not s or "tables" not in s:
            continue
        pts.append((s["tables"]["ops"], r["inputs"]["model"], r["inputs"]["knobs"],
                    {x["method"]: x for x in s["results"]}))
    if not pts:
        sys.exit(f"{a.sweep}: no search cells with results")
    pts.sort(key=lambda p: p[0])
    fig, (gap_ax, t_ax) = plt.subplots(1, 2, figsize=(9, 3.4))
    print(f"{'model':6} {'knobs':14} {'ops':>5} {'cd gap':>8} {'nbh gap':>8} {'cd s':>8} {'nbh s':>8} {'ilp s':>8}  ilp")
    for m, (color, marker, label) in STYLE.items():
        xs, gaps, ts, open_ = [], [], [], []
        for ops, model, knobs, res in pts:
            x = res.get(m)
            if not x or x.get("iteration_s") is None:
                continue
            xs.append(ops)
            gaps.append(100 * x.get("gap", 0.0))
            ts.append(x["search_s"])
            open_.append(m == "ilp" and not x.get("optimal"))
        if m != "ilp":
            gap_ax.plot(xs, gaps, marker=marker, color=color, label=label, linestyle="none")
        for xv, tv, o in zip(xs, ts, open_):
            t_ax.plot([xv], [tv], marker=marker, color=color, markerfacecolor="none" if o else color, linestyle="none")
        # one line per model family (mlp, gpt, bert grow along their own lines)
        for fam in sorted({p[1] for p in pts}):
            sel = [(o, x["search_s"]) for o, mod, _, res in pts if mod == fam and (x := res.get(m))
                   and x.get("iteration_s") is not None]
            t_ax.plot([o for o, _ in sel], [t for _, t in sel], color=color, alpha=0.35)
        t_ax.plot([], [], color=color, marker=marker, label=label)
    for ops, model, knobs, res in pts:
        k = ",".join(f"{a}={b}" for a, b in knobs.items())
        f = lambda m, key, fmt: (fmt % (res[m][key] * (100 if key == "gap" else 1))) if m in res and key in res[m] else "-"
        ilp = res.get("ilp", {})
        print(f"{model:6} {k:14} {ops:5d} {f('cd', 'gap', '%7.2f%%'):>8} {f('cd-nbh', 'gap', '%7.2f%%'):>8} "
              f"{f('cd', 'search_s', '%8.2f'):>8} {f('cd-nbh', 'search_s', '%8.2f'):>8} {f('ilp', 'search_s', '%8.2f'):>8}  "
              f"{'optimal' if ilp.get('optimal') else 'time limit'}")
    gap_ax.set_xscale("log")
    gap_ax.set_xlabel("graph size (ops)")
    gap_ax.set_ylabel("objective gap to ILP (%)")
    gap_ax.set_title("CD vs the ILP optimum", fontsize=9)
    gap_ax.legend(fontsize=7)
    t_ax.set_xscale("log")
    t_ax.set_yscale("log")
    t_ax.set_xlabel("graph size (ops)")
    t_ax.set_ylabel("search time (s)")
    t_ax.set_title("search time (lines: mlp, gpt, bert; open: ILP at its limit)", fontsize=9)
    t_ax.legend(fontsize=7)
    fig.tight_layout()
    save(fig, a.out, a.name)


if __name__ == "__main__":
    main()
