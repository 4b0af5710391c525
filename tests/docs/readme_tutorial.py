#!/usr/bin/env python3
"""Runs every ```sh block of README's "## Tutorial" section, in order, as a newcomer would after
`scripts/demo`: from a scratch folder whose `build/autoddl` is the binary under test and whose
`experiments/` and `tests/` are the repository's, so the README's commands run verbatim.
Fails on the first command that exits non-zero, or when the section has no command.
Usage: readme_tutorial.py AUTODDL README.md"""
import os
import re
import subprocess
import sys
import tempfile


def tutorial_blocks(readme_text):
    m = re.search(r"^## Tutorial.*?$(.*?)^## ", readme_text, re.M | re.S)
    if not m:
        sys.exit("README.md: no '## Tutorial' section")
    return re.findall(r"^```sh\n(.*?)^```", m.group(1), re.M | re.S)


def main():
    autoddl, readme = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    repo = os.path.dirname(readme)
    blocks = tutorial_blocks(open(readme, encoding="utf-8").read())
    if not blocks:
        sys.exit("README.md: the Tutorial section has no ```sh block")
    with tempfile.TemporaryDirectory(prefix="autoddl-tutorial-") as work:
        os.mkdir(os.path.join(work, "build"))
        os.symlink(autoddl, os.path.join(work, "build", "autoddl"))
        for folder in ("experiments", "tests"):
            os.symlink(os.path.join(repo, folder), os.path.join(work, folder))
        for n, block in enumerate(blocks, 1):
            print(f"--- tutorial block {n}:\n{block}", flush=True)
            # Output goes to our stdout (ctest keeps it on failure); the exit code decides.
            rc = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=work).returncode
            if rc != 0:
                sys.exit(f"README.md: tutorial block {n} exited {rc}")
    print(f"all {len(blocks)} tutorial blocks ran")


if __name__ == "__main__":
    main()
