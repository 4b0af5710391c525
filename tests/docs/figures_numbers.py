#!/usr/bin/env python3
"""docs/figures.md quotes no effect size that its figures' tables do not hold (issue 33): every
speedup written as N.NNx (and both ends of a range N.NN–M.MMx) appears in one of the numbers files
scripts/figures writes (docs/figures/*.txt, *.md), unless it is one of the papers' own figures or a
past value the text names as such, listed below with the reason. A number typed by hand, or left
behind when a figure was regenerated, fails here.
Usage: figures_numbers.py REPO"""
import glob
import os
import re
import sys

# (number as written, why it is not in a table)
NOT_OURS = {
    "1.22x": "the AutoDDL paper's 17.7% time reduction as a speedup",
    "3.5x": "the AutoDDL paper's 71.5% time reduction as a speedup",
    "1.6x": "the AutoSync paper's claim",
    "1.2x": "the low end of the AutoSync paper's 1.2-1.6x claim",
    "1.45x": "the AutoDDL paper's 31.1% time reduction as a speedup",
    "1.11x": "the AutoDDL paper's 10% time reduction as a speedup",
    "1.43x": "the AutoSync figure before issue 32 (history)",
    "1.85x": "the AutoSync figure before issue 32 (history)",
    "1.13x": "NCF on autosync-b in the AutoSync table before issue 32's Horovod-fp16 baseline (history)",
    "1.5x": "the simulator's boxing all-reduces against the analytical time (a ratio of two tables' columns)",
}


def quoted(text):
    out = set()
    for a, b in re.findall(r"(?<![\d.])(\d+\.\d+)[–-](\d+\.\d+)x\b", text):
        out |= {a + "x", b + "x"}
    out |= {m + "x" for m in re.findall(r"(?<![\d.–-])(\d+\.\d+)x\b", text)}
    return out


def main():
    repo = sys.argv[1]
    doc = open(os.path.join(repo, "docs", "figures.md"), encoding="utf-8").read()
    tables = ""
    for f in sorted(glob.glob(os.path.join(repo, "docs", "figures", "*.txt")) +
                    glob.glob(os.path.join(repo, "docs", "figures", "*.md"))):
        tables += open(f, encoding="utf-8").read()
    bad = sorted(x for x in quoted(doc) if x not in NOT_OURS and not re.search(r"(?<![\d.])" + re.escape(x), tables))
    if bad:
        sys.exit("docs/figures.md quotes speedups no figure table holds: " + ", ".join(bad) +
                 " (regenerate the figure with scripts/figures --only NAME and quote its numbers, or list a "
                 "paper's own figure in tests/docs/figures_numbers.py with the reason)")
    print(f"ok: {len(quoted(doc))} speedups quoted, all in the figures' tables or named as the papers'")


main()
