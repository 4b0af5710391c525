#!/usr/bin/env python3
"""The model version autoddl was built with (`autoddl --version`, from experiments/cmake/
write_version.cmake) equals the one experiments/figures/model_version.py computes from the source
tree, which `scripts/figures --check` compares figures' cells with: two implementations of one
hash must agree. (Fails after editing a model source without rebuilding: rebuild first.)
Usage: model_version_agrees.py AUTODDL REPO"""
import os
import re
import subprocess
import sys

autoddl, repo = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(repo, "experiments", "figures"))
from model_version import model_files, model_version  # noqa: E402

out = subprocess.run([autoddl, "--version"], capture_output=True, text=True, check=True).stdout
m = re.search(r"model version ([0-9a-f]{12}) \(SHA-256 of the (\d+) model source files", out)
if not m:
    sys.exit(f"FAIL: autoddl --version does not print the model version:\n{out}")
tree, n = model_version(repo), len(model_files(repo))
if (m.group(1), int(m.group(2))) != (tree, n):
    sys.exit(f"FAIL: autoddl --version says model version {m.group(1)} over {m.group(2)} files, the tree's is "
             f"{tree} over {n} (rebuild if a model source changed since the build)")
print(f"ok: model version {tree} over {n} files")
