#!/usr/bin/env python3
"""scripts/figures --check (issue 33): a figure whose sidecar records the current hash of its inputs
passes; one whose inputs changed since (another hash), or with no sidecar, or with an output
missing, is reported stale and the check exits 1. Runs figures.py on a scratch figures folder.
Usage: figures_check.py REPO"""
import json
import os
import subprocess
import sys
import tempfile

repo = sys.argv[1]
sys.path.insert(0, os.path.join(repo, "experiments", "figures"))
import figures  # noqa: E402


def check(folder, name):
    r = subprocess.run([sys.executable, os.path.join(repo, "experiments/figures/figures.py"), "--check", "--only", name,
                        "--figures-dir", folder], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def fail(why, out):
    sys.exit(f"FAIL: {why}\n{out}")


name = "autoddl_vgg16"
with tempfile.TemporaryDirectory() as d:
    rc, out = check(d, name)
    if rc != 1 or "no sidecar" not in out:
        fail("a figure without a sidecar is not stale", out)
    side = {"figure": name, "commit": "test", "date": "2026-12-06", "outputs": figures.FIGURES[name]["outputs"],
            "inputs_sha256": figures.inputs_sha256(name)}
    for o in side["outputs"]:
        open(os.path.join(d, o), "w").close()
    with open(os.path.join(d, name + ".json"), "w") as fh:
        json.dump(side, fh)
    rc, out = check(d, name)
    if rc != 0 or "1 of 1 current" not in out:
        fail("a figure with its inputs' current hash is stale", out)
    os.remove(os.path.join(d, side["outputs"][0]))
    rc, out = check(d, name)
    if rc != 1 or "missing" not in out:
        fail("a figure with a missing output is current", out)
    open(os.path.join(d, side["outputs"][0]), "w").close()
    side["inputs_sha256"] = "0" * 64
    with open(os.path.join(d, name + ".json"), "w") as fh:
        json.dump(side, fh)
    rc, out = check(d, name)
    if rc != 1 or "inputs changed" not in out:
        fail("a figure whose inputs changed is current", out)
print("ok")
