#!/usr/bin/env python3
"""`autoddl sweep plot` (issue 33 item 3) on a tiny sweep this test runs (10 `autoddl cost`,
`search` and `simulate` cells of two small GPTs on 2 GPUs, a few seconds): each kind writes
its image (PNG signature; SVG text holds the infeasible legend, the provenance line and, for cells
made by another model version, the STALE mark), and a missing folder, a folder without sweep.json,
an unknown kind, a bad extension and a python3 without matplotlib each get one line and exit 2.
Usage: sweep_plot.py AUTODDL"""
import json
import os
import subprocess
import sys
import tempfile

autoddl = os.path.abspath(sys.argv[1])
CONFIG = {
    "name": "plot_test",
    "models": [{"name": "gpt", "knobs": {"layers": 1, "hidden": 256, "heads": 4, "seq": 128, "vocab": 1000,
                                         "batch": "{gpus*2}"}},
               # activations of 512 sequences of 1024 per GPU do not fit: dp and zero3 are infeasible
               {"name": "gpt", "knobs": {"layers": 2, "hidden": 4096, "heads": 32, "seq": 1024, "vocab": 1000,
                                         "batch": "{gpus*512}"}}],
    "clusters": [{"name": "dgx-a100", "gpus": [2]}],
    "tasks": [{"search": ["cd,dp,zero3,megatron"], "time_limit_s": 5},
              {"schemes": ["dp", "zero3"], "evaluators": ["analytical", "sim"]}],
}


def run(args, env=None, cwd=None):
    r = subprocess.run([autoddl, *args], capture_output=True, text=True, timeout=120, cwd=cwd,
                       env=dict(os.environ, **(env or {})))
    return r.returncode, r.stdout + r.stderr


def fail(why, out=""):
    sys.exit(f"FAIL: {why}\n{out}")


def expect_error(args, text, env=None, cwd=None):
    rc, out = run(args, env, cwd)
    lines = out.strip().splitlines()
    if rc != 2 or len(lines) != 1 or not lines[0].startswith("autoddl: error: ") or text not in out:
        fail(f"autoddl {' '.join(args)}: expected exit 2 and one line with {text!r}", f"rc {rc}\n{out}")


with tempfile.TemporaryDirectory() as d:
    with open(os.path.join(d, "c.json"), "w") as fh:
        json.dump(CONFIG, fh)
    sweep = os.path.join(d, "sweep")
    rc, out = run(["sweep", "run", os.path.join(d, "c.json"), "--out", sweep, "--jobs", "2"])
    if rc != 0 or "10 run (10 ok" not in out:
        fail("the tiny sweep did not run", out)
    for kind in ("speedup", "parity", "time"):
        png = os.path.join(d, "plots", kind + ".png")  # the folder does not exist yet: plot makes it
        rc, out = run(["sweep", "plot", sweep, "--kind", kind, "--out", png])
        if rc != 0 or not os.path.exists(png):
            fail(f"--kind {kind} wrote no PNG", out)
        with open(png, "rb") as fh:
            if fh.read(8) != b"\x89PNG\r\n\x1a\n":
                fail(f"--kind {kind}: {png} is not a PNG")
        leftovers = [f for f in os.listdir(os.path.dirname(png)) if ".tmp." in f]
        if leftovers:
            fail(f"--kind {kind} left temporary files: {leftovers}")
        if kind == "time" and ("µs" not in out or "1470.64m" in out):
            fail("--kind time does not write times with SI prefixes", out)
        if kind == "speedup" and "infeasible" not in out:
            fail("--kind speedup lists no infeasible candidate of the big GPT", out)
    svg = os.path.join(d, "speedup.svg")
    rc, out = run(["sweep", "plot", sweep, "--out", svg])
    text = open(svg, encoding="utf-8").read() if rc == 0 else ""
    for want in ("x = infeasible", "sweep plot_test", "model version", "sweep plot --kind speedup"):
        if want not in text:
            fail(f"the SVG lacks {want!r}", out)
    if "STALE" in text:
        fail("a sweep of this autoddl's own cells is marked STALE", out)
    # Cells of another model version (kept with --reuse) are marked on the figure.
    results = os.path.join(sweep, "results.jsonl")
    rows = [json.loads(line) for line in open(results)]
    for r in rows[:3]:
        r["model_version"] = "0123456789ab"
    with open(results, "w") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)
    rc, out = run(["sweep", "plot", sweep, "--kind", "time", "--out", svg])
    if rc != 0 or "STALE: 3 of 10 cells" not in open(svg, encoding="utf-8").read():
        fail("cells of another model version are not marked STALE on the figure", out)

    expect_error(["sweep", "plot", os.path.join(d, "nowhere"), "--out", os.path.join(d, "x.png")],
                 "nowhere: no such sweep folder")
    os.makedirs(os.path.join(d, "empty"))
    expect_error(["sweep", "plot", os.path.join(d, "empty"), "--out", os.path.join(d, "x.png")],
                 "empty/sweep.json: not a sweep directory (no sweep.json)")
    expect_error(["sweep", "plot", sweep, "--out", os.path.join(d, "x.jpg")], "one of .png, .svg, .pdf")
    expect_error(["sweep", "plot", sweep, "--kind", "pie", "--out", os.path.join(d, "x.png")], "pie")
    no_mpl = os.path.join(d, "python-without-matplotlib")
    with open(no_mpl, "w") as fh:
        fh.write("#!/bin/sh\nexec /usr/bin/python3 -S \"$@\"\n")  # -S: no site-packages, so no matplotlib
    os.chmod(no_mpl, 0o755)
    for python in (no_mpl, os.path.join(d, "no-such-python")):
        expect_error(["sweep", "plot", sweep, "--out", os.path.join(d, "x.png")],
                     "python3 with matplotlib is needed: apt-get install python3-matplotlib",
                     env={"AUTODDL_PYTHON": python})
    if os.path.exists(os.path.join(d, "x.png")):
        fail("a failed plot left an image")
print("ok")
