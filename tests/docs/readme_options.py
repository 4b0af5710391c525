#!/usr/bin/env python3
"""Every option that `autoddl <command> --help` shows is in README's command table, in a row of
that command (rows start with `autoddl <command> ...`). Walks the subcommands recursively from
`autoddl --help`. Usage: readme_options.py AUTODDL README.md"""
import re
import subprocess
import sys


def help_text(binary, words):
    r = subprocess.run([binary, *words, "--help"], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        sys.exit(f"autoddl {' '.join(words)} --help: exit {r.returncode}")
    return r.stdout


def section(text, name):
    """Lines of a CLI11 help section ('Options:', 'Subcommands:'), up to the next blank line."""
    out, inside = [], False
    for line in text.splitlines():
        if re.match(rf"^{name}:\s*$", line, re.IGNORECASE):
            inside = True
        elif inside and not line.strip():
            inside = False
        elif inside:
            out.append(line)
    return out


def options(text):
    found = []
    for line in section(text, "Options"):
        m = re.match(r"^\s{1,4}(?:-\w,)?(--[\w-]+)", line)
        if m and m.group(1) not in ("--help", "--help-all"):
            found.append(m.group(1))
    return found


def subcommands(text):
    return [m.group(1) for line in section(text, "Subcommands") if (m := re.match(r"^\s{1,4}([a-z][\w-]*)\s", line))]


def main():
    binary, readme = sys.argv[1], sys.argv[2]
    rows = [line for line in open(readme, encoding="utf-8") if line.startswith("| `autoddl ")]
    missing, checked = [], 0
    todo = [[]]
    while todo:
        words = todo.pop()
        text = help_text(binary, words)
        subs = subcommands(text)
        todo += [words + [s] for s in subs]
        if not words or (subs and not options(text)):
            continue  # a group of subcommands (sync, sweep): its rows are theirs
        mine = [r for r in rows if r.startswith("| `autoddl " + " ".join(words) + " ")
                or r.startswith("| `autoddl " + " ".join(words) + "`")]
        if not mine:
            missing.append(f"autoddl {' '.join(words)}: no row in the command table")
            continue
        for opt in options(text):
            checked += 1
            if not any(re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", r) for r in mine):
                missing.append(f"autoddl {' '.join(words)} {opt}: in --help, not in README's row")
    for m in missing:
        print(m)
    print(f"{checked} options checked, {len(missing)} missing")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
