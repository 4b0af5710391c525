#!/usr/bin/env python3
"""scripts/figures --check (issue 33): a figure whose sidecar records the current hash of its inputs
and cells of the tree's model version passes; one whose inputs changed since (another hash), whose
cells came from another model version (kept with --reuse) or do not record it, or with no sidecar,
or with an output missing, is reported stale and the check exits 1. Runs figures.py on a scratch
figures folder.
Usage: figures_check.py REPO"""
import json
import os
import subprocess
import sys
import tempfile

repo = sys.argv[1]
sys.path.insert(0, os.path.join(repo, "experiments", "figures"))
import figures  # noqa: E402
from model_version import model_version  # noqa: E402


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
            "inputs_sha256": figures.inputs_sha256(name), "cell_versions": {model_version(repo): 12}}
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
    # Cells of another model version (a sweep rerun with --reuse after a model change), or cells
    # that do not record theirs, make the figure stale although its inputs' hash matches.
    for versions, why in (({model_version(repo): 9, "0123456789ab": 3}, "3 of 12 cells were made by another model "
                           "version (3 by 0123456789ab"), (None, "not recorded")):
        side["cell_versions"] = versions
        if versions is None:
            del side["cell_versions"]
        with open(os.path.join(d, name + ".json"), "w") as fh:
            json.dump(side, fh)
        rc, out = check(d, name)
        if rc != 1 or why not in out:
            fail(f"a figure with cells {versions} is current", out)
    side["cell_versions"] = {model_version(repo): 12}
    side["inputs_sha256"] = "0" * 64
    with open(os.path.join(d, name + ".json"), "w") as fh:
        json.dump(side, fh)
    rc, out = check(d, name)
    if rc != 1 or "inputs changed" not in out:
        fail("a figure whose inputs changed is current", out)
print("ok")
