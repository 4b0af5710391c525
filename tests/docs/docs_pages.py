#!/usr/bin/env python3
"""README stays a newcomer's page and the docs stay connected: README.md has at most 300 lines;
every docs/*.md opens (title, then a paragraph before any other heading) with what it is for;
every relative link in README.md and docs/*.md names a file that exists.
Usage: docs_pages.py REPO_ROOT"""
import glob
import os
import re
import sys

MAX_README_LINES = 300


def main():
    repo = sys.argv[1]
    errors = []
    readme = os.path.join(repo, "README.md")
    n = len(open(readme, encoding="utf-8").read().splitlines())
    if n > MAX_README_LINES:
        errors.append(f"README.md: {n} lines, more than {MAX_README_LINES}: move the long notes to docs/")
    pages = sorted(glob.glob(os.path.join(repo, "docs", "*.md")))
    for page in pages:
        lines = open(page, encoding="utf-8").read().splitlines()
        name = os.path.relpath(page, repo)
        if not lines or not lines[0].startswith("# "):
            errors.append(f"{name}: line 1: no '# title'")
            continue
        body = [l for l in lines[1:] if l.strip()]
        if not body or body[0].startswith("#"):
            errors.append(f"{name}: no opening paragraph under the title saying what the page is for")
    for f in [readme] + pages:
        text = open(f, encoding="utf-8").read()
        for m in re.finditer(r"\]\(([^)#\s]+)(#[^)]*)?\)", text):
            target = m.group(1)
            if re.match(r"[a-z]+:", target):
                continue
            if not os.path.exists(os.path.normpath(os.path.join(os.path.dirname(f), target))):
                errors.append(f"{os.path.relpath(f, repo)}: link to {target}: no such file")
    for e in errors:
        print(e)
    if errors:
        sys.exit(1)
    print(f"README.md: {n} lines; {len(pages)} docs pages open with a paragraph; every link resolves")


if __name__ == "__main__":
    main()
