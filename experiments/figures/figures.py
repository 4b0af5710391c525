#!/usr/bin/python3
"""The figures of docs/figures.md, one table row each: the sweeps a figure reads, the script that
plots it, what its numbers are (modelled or simulated, on which presets), and its outputs. Run by
scripts/figures (which builds autoddl first):

  figures.py [--only NAME[,NAME...]] [--list]   run the named figures' sweeps (resumable) and plots
  figures.py --check                            list every figure whose outputs are stale; exit 1 if any

  figures.py --reuse ...                        keep sweep rows of another model version (the figure is then
                                                marked STALE and --check refuses it)

Each figure gets a sidecar, docs/figures/<name>.json: the commit and date, the commands, the
configs' SHA-256, the cells read and the model versions that made them (`cell_versions`), the
seconds taken (in all and per step), and `inputs_sha256`, a hash of every file its numbers depend
on (the model sources of cmake/model_sources.txt, its configs and plot scripts). `--check`
recomputes that hash and the tree's model version (model_version.py): a figure without a sidecar,
whose inputs changed since, or whose cells were made by another model version (rows kept with
--reuse) is stale. Every PNG/SVG also carries a provenance line (sweeplib.save draws
$AUTODDL_FIGURE_PROVENANCE), and a red STALE line when its cells are not of the tree's version."""
import argparse
import datetime
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__))))
from model_version import model_files, model_version  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIG = "experiments/figures"
OUT = "docs/figures"
SWEEPS = "build/sweeps"
PY = "/usr/bin/python3"  # Debian's, with python3-matplotlib (a pyenv python may lack it)

MODELLED = "modelled: autoddl's analytical cost model on datasheet presets (uncalibrated)"
SIMULATED = "simulated: SimGrid and the analytical model on datasheet presets (uncalibrated)"
SYNC_SIMULATED = "simulated: AutoSync strategies in SimGrid on datasheet presets (uncalibrated)"

# name: sweeps (experiments/configs/<sweep>.json), whether the AutoSync dataset is needed first,
# the plot (argv after the python; {sweep}/{out} filled in), where stdout goes, what the numbers are,
# other files the numbers depend on (a config's cluster files), and the files the figure writes.
FIGURES = {
    "autoddl_transformer": dict(
        sweeps=["autoddl_transformer"], kind=MODELLED,
        plot=[f"{FIG}/autoddl_speedup.py", "{sweeps}/autoddl_transformer", "--experts", "megatron,dp",
              "--name", "autoddl_transformer", "--out", "{out}"],
        stdout="autoddl_transformer.txt", outputs=["autoddl_transformer.png", "autoddl_transformer.svg"]),
    "autoddl_vgg16": dict(
        sweeps=["autoddl_vgg16"], kind=MODELLED,
        plot=[f"{FIG}/autoddl_speedup.py", "{sweeps}/autoddl_vgg16", "--experts", "owt,dp", "--name",
              "autoddl_vgg16", "--out", "{out}"],
        stdout="autoddl_vgg16.txt", outputs=["autoddl_vgg16.png", "autoddl_vgg16.svg"]),
    "autoddl_vgg16_hardware": dict(
        sweeps=["autoddl_vgg16_hardware"], kind=MODELLED, inputs=["experiments/clusters/dgx1-v100-1nic.json"],
        plot=[f"{FIG}/autoddl_speedup.py", "{sweeps}/autoddl_vgg16_hardware", "--experts", "owt,dp", "--name",
              "autoddl_vgg16_hardware", "--out", "{out}"],
        stdout="autoddl_vgg16_hardware.txt",
        outputs=["autoddl_vgg16_hardware.png", "autoddl_vgg16_hardware.svg"]),
    "cd_vs_ilp": dict(
        sweeps=["autoddl_cd_vs_ilp"], kind=MODELLED,
        plot=[f"{FIG}/cd_vs_ilp.py", "{sweeps}/autoddl_cd_vs_ilp", "--out", "{out}"],
        stdout="cd_vs_ilp.txt", outputs=["cd_vs_ilp.png", "cd_vs_ilp.svg"]),
    "sim_vs_analytical": dict(
        sweeps=["sim_vs_analytical"], kind=SIMULATED,
        plot=[f"{FIG}/sim_vs_analytical.py", "{sweeps}/sim_vs_analytical", "--out", "{out}"],
        stdout="sim_vs_analytical.txt", outputs=["sim_vs_analytical.png", "sim_vs_analytical.svg"]),
    "autoddl_gpt3": dict(
        sweeps=["autoddl_gpt3"], kind=MODELLED,
        plot=[f"{FIG}/search_table.py", "{sweeps}/autoddl_gpt3"], stdout="autoddl_gpt3.md", outputs=[]),
    "autoddl_search_table": dict(
        sweeps=["autoddl_search_table"], kind=MODELLED,
        plot=[f"{FIG}/search_table.py", "{sweeps}/autoddl_search_table"], stdout="autoddl_search_table.md",
        outputs=[]),
    "autosync": dict(
        sweeps=["autosync"], kind=SYNC_SIMULATED,
        plot=[f"{FIG}/autosync.py", "{sweeps}/autosync", "--out", "{out}"], stdout="autosync.txt",
        outputs=["autosync_speedup.png", "autosync_speedup.svg", "autosync_trials.png", "autosync_trials.svg",
                 "autosync.md"]),
    "autosync_ranker_accuracy": dict(
        sweeps=["autosync_ranker"], dataset=True, kind=SYNC_SIMULATED,
        plot=[f"{FIG}/sync_ranker_accuracy.py", "{sweeps}/autosync_ranker", "--out", "{out}"],
        stdout="autosync_ranker_accuracy.txt",
        outputs=["autosync_ranker_accuracy.png", "autosync_ranker_accuracy.svg"]),
    "autosync_transfer": dict(
        sweeps=["autosync_transfer"], dataset=True, kind=SYNC_SIMULATED,
        plot=[f"{FIG}/sync_transfer.py", "{sweeps}/autosync_transfer", "--out", "{out}"],
        stdout="autosync_transfer.txt", outputs=["autosync_transfer.png", "autosync_transfer.svg"]),
    # Issue 32 item 4, "does learning help?": the documented subset (80 searches on 2 pairs);
    # experiments/configs/autosync_ablation.json is the full one (640 searches, 9 hours on 2
    # cores): name it here once it has been run on a machine with the cores for it.
    "autosync_ablation": dict(
        sweeps=["autosync_ablation_subset"], kind=SYNC_SIMULATED,
        plot=[f"{FIG}/sync_ablation.py", "{sweeps}/autosync_ablation_subset", "--out", "{out}"],
        stdout="autosync_ablation.md", outputs=["autosync_ablation.png", "autosync_ablation.svg"]),
}

# What every figure's numbers depend on besides its own config and script: the model sources that
# compute them (cmake/model_sources.txt: the cost model and its presets, the search, the simulator,
# the sync module, the in-process cells; the same files the cells' model version hashes) and the
# shared plot code. The CLI, the sweep runner and the build files only carry them.
SHARED_PLOT_CODE = [f"{FIG}/sweeplib.py"]
DATASET_DIR = f"{SWEEPS}/autosync_data"
DATASET_COMMAND = ["sync", "dataset", "--out", DATASET_DIR, "--pairs", "*@autosync-a,*@autosync-b",
                   "--per-pair", "250"]


def git(*args):
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


def sha256_file(path):
    h = hashlib.sha256()
    with open(os.path.join(ROOT, path), "rb") as fh:
        h.update(fh.read())
    return h.hexdigest()


def inputs_sha256(name):
    """SHA-256 over (path, content hash) of every file the figure's numbers depend on, as they are
    in the working tree (so an uncommitted change counts): the model sources, and the tracked
    config, plot script, shared plot code and extra inputs."""
    f = FIGURES[name]
    paths = [f"experiments/configs/{s}.json" for s in f["sweeps"]] + [f["plot"][0]] + SHARED_PLOT_CODE + \
        f.get("inputs", [])
    files = sorted(set(git("ls-files", "--", *paths).splitlines()) | set(model_files(ROOT)))
    h = hashlib.sha256()
    for p in files:
        if os.path.exists(os.path.join(ROOT, p)):
            h.update(f"{p}\0{sha256_file(p)}\n".encode())
    return h.hexdigest()


def commit():
    c = git("rev-parse", "--short=12", "HEAD")
    return c + ("-dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def cell_counts(sweep_dir, current):
    """(ok cells, failed rows, {model version: ok cells}) of a sweep folder, the rows of the
    `current` model version standing over others as `autoddl sweep run` picks them."""
    sys.path.insert(0, os.path.join(ROOT, FIG))
    from sweeplib import cell_versions, failed_count, load_rows  # noqa: E402
    rows = load_rows(sweep_dir, prefer=current)
    return len(rows), failed_count(sweep_dir), cell_versions(rows)


def run(argv, **kw):
    print("figures: $ " + " ".join(argv), flush=True)
    subprocess.run(argv, cwd=ROOT, check=True, **kw)


def fresh_dataset(current):
    """Removes the dataset folder unless its records were made by the current model version:
    `sync dataset` resumes by record key alone, so it would keep every record of an older
    model (another workload, another evaluator) and write none. The folder's `model_version`
    file says which version wrote it (none: written before the file existed, so removed)."""
    folder = os.path.join(ROOT, DATASET_DIR)
    if not os.path.isdir(folder):
        return
    try:
        with open(os.path.join(folder, "model_version")) as fh:
            if fh.read().strip() == current:
                return
    except FileNotFoundError:
        pass
    print(f"figures: {DATASET_DIR} was made by another model version: written again", flush=True)
    shutil.rmtree(folder)


def make(name, autoddl, jobs, dataset_done, reuse=False):
    f = FIGURES[name]
    t0 = time.time()
    current = model_version(ROOT)
    commands = []
    if f.get("dataset") and not dataset_done:
        fresh_dataset(current)
        argv = [autoddl] + DATASET_COMMAND + ["--jobs", str(jobs)]
        run(argv)
        with open(os.path.join(ROOT, DATASET_DIR, "model_version"), "w") as fh:
            fh.write(current + "\n")
        commands.append(" ".join(argv[1:]))
    cells, versions = {}, {}
    for s in f["sweeps"]:
        argv = [autoddl, "sweep", "run", f"experiments/configs/{s}.json", "--jobs", str(jobs), "--out", f"{SWEEPS}/{s}"]
        argv += ["--reuse"] if reuse else []
        run(argv)
        commands.append(" ".join(["autoddl"] + argv[1:]))
        ok, failed, by_version = cell_counts(os.path.join(ROOT, SWEEPS, s), current)
        cells[s] = {"ok": ok, "failed": failed}
        for v, n in by_version.items():
            versions[v] = versions.get(v, 0) + n
    t_sweeps = time.time() - t0
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    configs = ", ".join(f"experiments/configs/{s}.json" for s in f["sweeps"])
    env = dict(os.environ, AUTODDL_FIGURE_PROVENANCE=f"{f['kind']}; {configs}; commit {commit()}, model {current}, {date}",
               AUTODDL_MODEL_VERSION=current)
    plot = [PY] + [a.format(sweeps=SWEEPS, out=OUT) for a in f["plot"]]
    print("figures: $ " + " ".join(plot), flush=True)
    out = subprocess.run(plot, cwd=ROOT, env=env, capture_output=True, text=True)
    sys.stdout.write(out.stdout)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        raise SystemExit(f"figures: {name}: the plot failed")
    sys.stderr.write(out.stderr)  # a STALE mark is reported there
    text = "".join(l for l in out.stdout.splitlines(True) if not l.startswith("wrote "))
    with open(os.path.join(ROOT, OUT, f["stdout"]), "w") as fh:
        fh.write(text)
    commands.append(" ".join(["python3"] + plot[1:]))
    sidecar = {
        "figure": name,
        "kind": f["kind"],
        "commit": commit(),
        "date": date,
        "commands": commands,
        "configs": {f"experiments/configs/{s}.json": sha256_file(f"experiments/configs/{s}.json") for s in f["sweeps"]},
        "cells": cells,
        "model_version": current,
        "cell_versions": versions,
        "outputs": f["outputs"] + [f["stdout"]],
        "seconds": round(time.time() - t0, 1),
        "seconds_by_step": {"sweeps": round(t_sweeps, 1), "plot": round(time.time() - t0 - t_sweeps, 1)},
        "inputs_sha256": inputs_sha256(name),
    }
    with open(os.path.join(ROOT, OUT, name + ".json"), "w") as fh:
        json.dump(sidecar, fh, indent=1)
        fh.write("\n")
    print(f"figures: {name} in {sidecar['seconds']} s (sweeps {sidecar['seconds_by_step']['sweeps']} s, "
          f"plot {sidecar['seconds_by_step']['plot']} s)", flush=True)


def stale_reason(name, out_dir):
    """Why the figure in out_dir is stale, or None when it is current."""
    path = os.path.join(out_dir, name + ".json")
    if not os.path.exists(path):
        return "no sidecar (made before figures carried their provenance)"
    with open(path) as fh:
        side = json.load(fh)
    for o in side.get("outputs", []):
        if not os.path.exists(os.path.join(out_dir, o)):
            return f"{o} is missing"
    if side.get("inputs_sha256") != inputs_sha256(name):
        return f"its inputs changed since commit {side.get('commit')} ({side.get('date')})"
    # The cells' model versions: rows kept with --reuse (or plotted from an old sweep folder) are
    # of another version than the sources' even where the inputs' hash matches.
    versions = side.get("cell_versions")
    if versions is None:
        return "its cells' model versions are not recorded (made before sweep rows carried them)"
    current = model_version(ROOT)
    other = {v: n for v, n in versions.items() if v != current}
    if other:
        what = ", ".join(f"{n} by {v or 'an unrecorded version'}" for v, n in sorted(other.items()))
        return (f"{sum(other.values())} of {sum(versions.values())} cells were made by another model version "
                f"({what}; the model sources are now {current}), e.g. kept with --reuse")
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help="comma-separated figure names (default: all)")
    ap.add_argument("--check", action="store_true", help="list stale figures; exit 1 if any")
    ap.add_argument("--list", action="store_true", help="list the figures and exit")
    ap.add_argument("--figures-dir", default=OUT, help="where the figures are (for --check)")
    ap.add_argument("--autoddl", default="build/autoddl")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--reuse", action="store_true",
                    help="keep sweep rows of another model version (the figure is marked STALE)")
    a = ap.parse_args()
    names = list(FIGURES)
    if a.only:
        names = a.only.split(",")
        unknown = [n for n in names if n not in FIGURES]
        if unknown:
            raise SystemExit(f"figures: --only: unknown figure {', '.join(unknown)} (known: {', '.join(FIGURES)})")
    if a.list:
        for n in names:
            print(f"{n:26} {', '.join(FIGURES[n]['sweeps']):22} {FIGURES[n]['kind']}")
        return 0
    if a.check:
        stale = [(n, stale_reason(n, os.path.join(ROOT, a.figures_dir))) for n in names]
        stale = [(n, why) for n, why in stale if why]
        for n, why in stale:
            print(f"stale: {n}: {why}")
        print(f"figures: {len(names) - len(stale)} of {len(names)} current" +
              ("" if not stale else f"; rebuild with scripts/figures --only {','.join(n for n, _ in stale)}"))
        return 1 if stale else 0
    os.makedirs(os.path.join(ROOT, OUT), exist_ok=True)
    dataset_done = False
    for n in names:
        make(n, a.autoddl, a.jobs, dataset_done, a.reuse)
        dataset_done = dataset_done or bool(FIGURES[n].get("dataset"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
