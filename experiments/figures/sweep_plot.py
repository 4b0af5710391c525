#!/usr/bin/python3
"""`autoddl sweep plot DIR --kind speedup|parity|time --out FILE [--baseline M,...]`: a user's own
sweep drawn with the repository figures' code (sweeplib's rows, units and marks; the simulator
figure's parity plot). autoddl runs it with python3; it can also be run by hand.

  speedup  per cell (model, knobs, cluster, GPUs), each method's or scheme's speedup over the best
           feasible baseline (--baseline, default: every one that is not a search method);
  parity   simulated against analytical iteration time (cells of the `sim` evaluator);
  time     iteration time per cell and method, in s, ms or µs as the numbers need.

Infeasible candidates are marked with an x (legend entry), a y axis whose values span more than
10x is logarithmic, failed cells are counted in the title, and the image carries the provenance
line (sweep, config, versions, date) and a STALE mark when its cells came from another model
version than the autoddl that plots them. The numbers are printed as a table."""
import argparse
import datetime
import json
import os
import sys

try:
    import matplotlib
    import matplotlib.ticker
    import numpy as np
except ImportError:
    sys.stderr.write("autoddl: error: sweep plot: python3 with matplotlib is needed: apt-get install "
                     f"python3-matplotlib ({sys.executable} has no matplotlib)\n")
    sys.exit(2)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import matplotlib.pyplot as plt  # noqa: E402

import sweeplib  # noqa: E402
from sim_vs_analytical import draw_parity, parity_points  # noqa: E402

SYNC_SEARCHED = "sync search (best found)"


def fail(folder, kind, reason):
    sys.stderr.write(f"autoddl: error: {folder}: --kind {kind}: {reason}\n")
    sys.exit(2)


def varying_knobs(rows):
    """The knobs whose values differ between cells: only those go into the settings' labels."""
    seen = {}
    for r in rows:
        for k, v in r["inputs"].get("knobs", {}).items():
            seen.setdefault(k, set()).add(str(v))
    return {k for k, vs in seen.items() if len(vs) > 1}


def setting_of(i, shown):
    """A cell's setting (what its candidates are compared within) as (sort key, label)."""
    knobs = ",".join(f"{k}={v}" for k, v in sorted(i.get("knobs", {}).items()) if k in shown)
    cluster = os.path.splitext(os.path.basename(str(i.get("cluster", "?"))))[0]
    label = f"{i.get('model', '?')}{'[' + knobs + ']' if knobs else ''}\n{cluster} {i.get('gpus', '?')} GPUs"
    if i.get("mesh"):
        label += f" mesh {i['mesh']}"
    key = (str(i.get("model")), knobs, cluster, int(i.get("gpus", 0)), str(i.get("mesh", "")))
    return key, label


def candidates(row):
    """(method or scheme, iteration s or None when infeasible) of every candidate a row records."""
    i, res = row["inputs"], row["results"]
    if "search" in res:
        for x in res["search"].get("results", []):
            ok = x.get("feasible") and x.get("iteration_s")
            yield x["method"], x["iteration_s"] if ok else None
    elif "cost" in res:
        c = res["cost"]
        yield i.get("scheme", "?"), c["iteration_s"] if c.get("feasible", True) and c.get("iteration_s") else None
    elif "simulate" in res:
        yield i.get("scheme", "?") + " (simulated)", res["simulate"].get("iteration_s")
    elif "sync_search" in res:
        s = res["sync_search"]
        for b in s.get("builders", []):
            yield b["builder"], b.get("mean_s")
        yield SYNC_SEARCHED, s["best"]["mean_s"]


def table(rows):
    """{setting key: (label, {candidate: seconds or None})}, seeds and repetitions averaged."""
    acc = {}
    shown = varying_knobs(rows)
    for r in rows:
        key, label = setting_of(r["inputs"], shown)
        for name, t in candidates(r):
            acc.setdefault(key, (label, {}))[1].setdefault(name, []).append(t)
    out = {}
    for key, (label, cands) in acc.items():
        c = {n: None if any(t is None for t in ts) else sum(ts) / len(ts) for n, ts in cands.items()}
        # The simulator does not check memory: a scheme the analytical cost finds not to fit is
        # infeasible in its simulated row too.
        for n in list(c):
            if n.endswith(" (simulated)") and n[:-len(" (simulated)")] in c and c[n[:-len(" (simulated)")]] is None:
                c[n] = None
        out[key] = (label, c)
    return out


def is_baseline(name, chosen):
    return name in chosen if chosen else name not in sweeplib.SEARCHED and name != SYNC_SEARCHED


def bars(ax, settings, names, value, ylabel, tick_text=None):
    """Grouped bars, one group per setting and one bar per candidate; None values are drawn as an x.
    tick_text: how a y tick's value is written (default: as a plain number)."""
    x = np.arange(len(settings))
    w = 0.8 / max(1, len(names))
    heights = [v for s in settings for n in names if (v := value(s, n))]
    lo = min(heights) if heights else 1
    log = bool(heights) and max(heights) > 10 * lo
    cmap = plt.get_cmap("tab10")
    for k, n in enumerate(names):
        xs = x + (k - (len(names) - 1) / 2) * w
        ys = [value(s, n) for s in settings]
        ax.bar(xs, [y or 0 for y in ys], w, label=n, color=cmap(k % 10))
        for xi, s, y in zip(xs, settings, ys):
            if y is None and n in s[1]:  # present but infeasible (a missing candidate is just absent)
                ax.plot([xi], [lo / 1.5 if log else 0], marker="x", color="black", ms=6, mew=1.5, clip_on=False)
    ax.plot([], [], marker="x", ls="none", color="black", label="x = infeasible (does not fit)")
    ax.set_xticks(x, [s[0] for s in settings], rotation=30, ha="right", fontsize=7)
    if log:
        ax.set_yscale("log")
        ax.set_ylim(lo / 2, max(heights) * 2)
        ylabel += ", log"
    elif heights:
        ax.set_ylim(0, max(heights) * 1.15)
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(
        lambda v, _: tick_text(v) if tick_text and v > 0 else f"{v:g}"))
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))


def figure_for(n_settings, n_names):
    return plt.subplots(figsize=(min(30, max(6.5, 0.18 * n_settings * (n_names + 1) + 2)), 4.2))


def plot_time(folder, rows):
    t = table(rows)
    if not t:
        fail(folder, "time", "no cells with per-method times (search, scheme or sync_search cells)")
    keys = sorted(t)
    names = sorted({n for k in keys for n in t[k][1]}, key=lambda n: (n not in sweeplib.SEARCHED, n))
    settings = [(t[k][0], t[k][1]) for k in keys]
    fig, ax = figure_for(len(keys), len(names))
    # Seconds on the axis, each tick written with its own SI prefix (500 µs, 2 ms, 1.5 s).
    bars(ax, settings, names, lambda s, n: s[1].get(n), "iteration time", lambda v: sweeplib.si_seconds(v, 4))
    print(f"{'setting':40} {'method':28} {'iteration':>12}")
    for label, cands in settings:
        for n in names:
            if n in cands:
                v = cands[n]
                print(f"{label.replace(chr(10), ' | '):40} {n:28} {sweeplib.si_seconds(v) if v else 'infeasible':>12}")
    return fig, ax


def plot_speedup(folder, rows, baseline):
    chosen = [b for b in baseline.split(",") if b] if baseline else []
    t = table(rows)
    settings, skipped = [], []
    print(f"{'setting':40} {'method':28} {'iteration':>12} {'speedup':>8}  (over the best baseline)")
    for k in sorted(t):
        label, cands = t[k]
        base = [v for n, v in cands.items() if is_baseline(n, chosen) and v]
        if not base:
            skipped.append(label.replace("\n", " | "))
            continue
        best = min(base)
        sp = {n: (best / v if v else None) for n, v in cands.items()}
        settings.append((label, sp))
        for n, v in sorted(cands.items(), key=lambda c: (is_baseline(c[0], chosen), c[0])):
            print(f"{label.replace(chr(10), ' | '):40} {n:28} {sweeplib.si_seconds(v) if v else 'infeasible':>12} "
                  f"{sp[n]:7.2f}x" if v else f"{label.replace(chr(10), ' | '):40} {n:28} {'infeasible':>12} {'-':>8}")
    for s in skipped:
        print(f"{s}: no feasible baseline ({', '.join(chosen) if chosen else 'no method other than a search'}): "
              "left out")
    if not settings:
        fail(folder, "speedup", "no cell has a feasible baseline to compare with (" +
             (f"--baseline {baseline}" if chosen else "every candidate is a search method; name one with --baseline")
             + ")")
    names = sorted({n for _, sp in settings for n in sp}, key=lambda n: (is_baseline(n, chosen), n))
    fig, ax = figure_for(len(settings), len(names))
    bars(ax, settings, names, lambda s, n: s[1].get(n), "speedup over the best baseline (x)")
    ax.axhline(1.0, color="black", lw=0.8)
    return fig, ax


def plot_parity(folder, rows):
    pts = parity_points(rows)
    if not pts:
        fail(folder, "parity", "no cell has both an analytical and a simulated time (add \"sim\" to the config's "
             "evaluators)")
    fig, ax = plt.subplots(figsize=(5, 4.4))
    draw_parity(ax, pts)
    return fig, ax


def provenance(folder, kind, rows):
    with open(os.path.join(folder, "sweep.json")) as fh:
        m = json.load(fh)
    made = sorted({r.get("autoddl_version", "?") for r in rows})
    versions = sorted({sweeplib.model_version_of(r) or "unrecorded" for r in rows})
    day = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    plotter = os.environ.get("AUTODDL_VERSION")
    return (f"sweep {m.get('name', '?')} ({m.get('config_file', '?')}): {len(rows)} cells by autoddl "
            f"{', '.join(made)}, model version {', '.join(versions)}; plotted {day} by "
            f"{'autoddl ' + plotter + ' ' if plotter else ''}sweep plot --kind {kind}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sweep")
    ap.add_argument("--kind", choices=["speedup", "parity", "time"], default="speedup")
    ap.add_argument("--out", required=True)
    ap.add_argument("--baseline", default="")
    a = ap.parse_args()
    if not os.path.exists(os.path.join(a.sweep, "sweep.json")):
        fail(a.sweep, a.kind, "not a sweep folder (no sweep.json)")
    rows = sweeplib.load_rows(a.sweep)
    if not rows:
        fail(a.sweep, a.kind, "no ok cells to plot (`autoddl sweep status` lists the failed ones)")
    fig, ax = {"time": lambda: plot_time(a.sweep, rows), "parity": lambda: plot_parity(a.sweep, rows),
               "speedup": lambda: plot_speedup(a.sweep, rows, a.baseline)}[a.kind]()
    failed = sweeplib.failed_count(a.sweep)
    ax.set_title(f"{os.path.basename(os.path.normpath(a.sweep))}: {len(rows)} cells" +
                 (f" ({failed} failed rows not shown: autoddl sweep status)" if failed else ""), fontsize=9)
    os.environ.setdefault("AUTODDL_FIGURE_PROVENANCE", provenance(a.sweep, a.kind, rows))
    fig.tight_layout()
    sweeplib.save_file(fig, a.out)


if __name__ == "__main__":
    main()
