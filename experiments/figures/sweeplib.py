"""Reading sweep results for the figure scripts and `autoddl sweep plot`: every results*.jsonl of a
sweep folder, the standing row per cell (rows of the current model version over others, then an ok
row over failures), and matplotlib set up for small, reproducible PNG + SVG files with a
provenance line, and a red STALE mark when the plotted cells came from another model version than
the current one (cmake/model_sources.txt). Figures read results only; they never run a model."""
import argparse
import collections
import glob
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

plt.rcParams.update({
    "svg.fonttype": "none",   # text stays text: small SVGs
    "svg.hashsalt": "autoddl",  # stable ids, so regenerated SVGs diff cleanly
    "font.size": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
})

# `autoddl search` methods that search; the others (dp, megatron, owt, zero1, ...) are the experts
# and baselines a searched scheme is compared with.
SEARCHED = ("cd", "cd-nbh", "cd-mesh", "cd-expert", "ilp", "chain-dp")

def figure_parser(doc, name=None):
    """The arguments every figure script takes: the sweep folder, the output stem (--name: `name`
    by default, required when None) and the output folder (--out). Scripts add their own."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sweep")
    if name is None:
        ap.add_argument("--name", required=True, help="output file stem")
    else:
        ap.add_argument("--name", default=name)
    ap.add_argument("--out", default="docs/figures")
    return ap


# Every row load_rows returned in this process: what save() checks the model versions of.
LOADED = []


def model_version_of(row):
    """The model version a row records; "" for rows made before rows carried it."""
    v = row.get("model_version")
    return v if isinstance(v, str) else ""


def current_model_version():
    """The version plotted cells should have: $AUTODDL_MODEL_VERSION (`autoddl sweep plot` sets its
    own, scripts/figures the tree's), or None when unknown."""
    return os.environ.get("AUTODDL_MODEL_VERSION") or None


def read_rows(folder):
    """Every readable row of every results*.jsonl in the folder, in file order (a torn last line,
    which a kill can leave, is skipped: that cell was not recorded)."""
    files = sorted(glob.glob(os.path.join(folder, "results*.jsonl")))
    if not files:
        raise SystemExit(f"{folder}: no results*.jsonl (run `autoddl sweep run` first)")
    out = []
    for f in files:
        with open(f) as fh:
            for line in fh:
                if not line.endswith("\n"):
                    continue
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
    return out


def load_rows(folder, prefer=None):
    """The standing row of every cell of the sweep in a folder (ok rows only). Rows of the model
    version `prefer` (default: current_model_version(), else that of the row finished last) stand
    over other versions' rows, as `autoddl sweep run` picks them; then an ok row over failures.
    Rows of cells that sweep.json no longer lists (an older config run into the same folder) are
    left out."""
    manifest = os.path.join(folder, "sweep.json")
    keys = None
    if os.path.exists(manifest):
        with open(manifest) as fh:
            keys = {c["key"] for c in json.load(fh)["cells"]}
    all_rows = read_rows(folder)
    if prefer is None:
        prefer = current_model_version()
    if prefer is None and all_rows:
        prefer = model_version_of(max(all_rows, key=lambda r: r.get("finished_utc", "")))
    rows = {}
    for r in all_rows:
        old = rows.get(r["key"])
        if old is not None and (model_version_of(r) == prefer) != (model_version_of(old) == prefer):
            if model_version_of(r) == prefer:
                rows[r["key"]] = r
            continue
        if old is None or r["status"] == "ok" or old["status"] != "ok":
            rows[r["key"]] = r
    out = [r for r in rows.values() if r["status"] == "ok" and (keys is None or r["key"] in keys)]
    LOADED.extend(out)
    return out


def cell_versions(rows):
    """model version -> number of rows ("" for rows that do not record one)."""
    return dict(collections.Counter(model_version_of(r) for r in rows))


def stale_text(rows, current=None):
    """The STALE mark for a figure of these rows, or None: cells of a model version other than
    `current` (when given), or of several versions (when not)."""
    counts = collections.Counter(model_version_of(r) for r in rows)
    if not counts:
        return None
    name = {"": "unrecorded"}
    if current:
        other = {v: n for v, n in counts.items() if v != current}
        if not other:
            return None
        what = ", ".join(f"{n} from {name.get(v, v)}" for v, n in sorted(other.items()))
        return (f"STALE: {sum(other.values())} of {len(rows)} cells were made by another model version ({what}; "
                f"current {current}): rerun the sweep without --reuse")
    if len(counts) == 1:
        return None
    what = ", ".join(f"{n} from {name.get(v, v)}" for v, n in sorted(counts.items()))
    return f"STALE: the cells come from {len(counts)} model versions ({what}): rerun the sweep without --reuse"


def si_seconds(s, digits=3):
    """A time with an SI prefix chosen for it: 1.47 s, 234 ms, 56.1 µs, 820 ns."""
    for scale, unit in ((1, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")):
        if abs(s) >= scale or scale == 1e-9:
            return f"{s / scale:.{digits}g} {unit}"


def seconds_axis(values):
    """(scale, unit) for an axis of times: the prefix of the median, so ticks read 10–1000."""
    v = sorted(abs(x) for x in values if x)
    m = v[len(v) // 2] if v else 1
    for scale, unit in ((1, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if m >= scale:
            return scale, unit
    return 1e-9, "ns"


def failed_count(folder):
    n = 0
    for f in glob.glob(os.path.join(folder, "results*.jsonl")):
        with open(f) as fh:
            n += sum(1 for line in fh if '"status":"failed"' in line)
    return n


def provenance_line():
    """What made a figure: scripts/figures (figures.py) sets $AUTODDL_FIGURE_PROVENANCE to what
    its numbers are (modelled or simulated, on which presets), its config, commit and date."""
    text = os.environ.get("AUTODDL_FIGURE_PROVENANCE")
    if text:
        return text
    import datetime
    day = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    return f"plotted by {os.path.basename(sys.argv[0])} from {sys.argv[1] if len(sys.argv) > 1 else '?'}, {day} " \
           "(outside scripts/figures: no sidecar)"


def mark(fig):
    """Draws the provenance line under the plot and, when the cells this process loaded are stale
    (stale_text), a red STALE line above it."""
    fig.text(0.0, 0.0, provenance_line(), fontsize=6, color="#555555", ha="left", va="top", wrap=True)
    stale = stale_text(LOADED, current_model_version())
    if stale:
        fig.text(0.0, 1.0, stale, fontsize=8, color="#c00000", ha="left", va="bottom", fontweight="bold", wrap=True)
        sys.stderr.write(f"figure marked {stale}\n")  # stderr: stdout is the figure's numbers file


def save(fig, out_dir, name):
    """Writes out_dir/name.png and out_dir/name.svg, each with its provenance line under the
    plot; returns their paths."""
    os.makedirs(out_dir, exist_ok=True)
    mark(fig)
    paths = [os.path.join(out_dir, name + ext) for ext in (".png", ".svg")]
    fig.savefig(paths[0], dpi=110, bbox_inches="tight", metadata={"Software": None})
    fig.savefig(paths[1], bbox_inches="tight", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    for p in paths:
        print("wrote", p)
    return paths


def save_file(fig, path):
    """Writes one image (its type from the extension) with the marks, whole or not at all: to a
    temporary file in the same folder, then renamed over path."""
    mark(fig)
    folder, base = os.path.split(os.path.abspath(path))
    stem, ext = os.path.splitext(base)
    tmp = os.path.join(folder, f".{stem}.tmp.{os.getpid()}{ext}")
    try:
        meta = {"Software": None} if ext == ".png" else {"Date": None, "Creator": None} if ext == ".svg" else {}
        fig.savefig(tmp, dpi=110, bbox_inches="tight", metadata=meta)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    plt.close(fig)
    print("wrote", path)
    return path
