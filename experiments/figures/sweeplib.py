"""Reading sweep results for the figure scripts: every results*.jsonl of a sweep folder, the
standing row per cell (an ok row over failures), and matplotlib set up for small,
reproducible PNG + SVG files. Figures read results only; they never run a model."""
import glob
import json
import os

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


def load_rows(folder):
    """The standing row of every cell of the sweep in a folder (ok rows only). Rows of cells
    that sweep.json no longer lists (an older config run into the same folder) are left out."""
    manifest = os.path.join(folder, "sweep.json")
    keys = None
    if os.path.exists(manifest):
        with open(manifest) as fh:
            keys = {c["key"] for c in json.load(fh)["cells"]}
    files = sorted(glob.glob(os.path.join(folder, "results*.jsonl")))
    if not files:
        raise SystemExit(f"{folder}: no results*.jsonl (run `autoddl sweep run` first)")
    rows = {}
    for f in files:
        with open(f) as fh:
            for line in fh:
                if not line.endswith("\n"):
                    continue  # a torn last line: that cell was not recorded
                try:
                    r = json.loads(line)
                except json.JSONDecodeError:
                    continue
                old = rows.get(r["key"])
                if old is None or r["status"] == "ok" or old["status"] != "ok":
                    rows[r["key"]] = r
    return [r for r in rows.values() if r["status"] == "ok" and (keys is None or r["key"] in keys)]


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
    import sys
    day = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    return f"plotted by {os.path.basename(sys.argv[0])} from {sys.argv[1] if len(sys.argv) > 1 else '?'}, {day} " \
           "(outside scripts/figures: no sidecar)"


def save(fig, out_dir, name):
    """Writes out_dir/name.png and out_dir/name.svg, each with its provenance line under the
    plot; returns their paths."""
    os.makedirs(out_dir, exist_ok=True)
    fig.text(0.0, 0.0, provenance_line(), fontsize=6, color="#555555", ha="left", va="top", wrap=True)
    paths = [os.path.join(out_dir, name + ext) for ext in (".png", ".svg")]
    fig.savefig(paths[0], dpi=110, bbox_inches="tight", metadata={"Software": None})
    fig.savefig(paths[1], bbox_inches="tight", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    for p in paths:
        print("wrote", p)
    return paths
