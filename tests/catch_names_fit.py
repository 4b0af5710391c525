#!/usr/bin/env python3
"""Every Catch test name fits on one line of Catch's console (tests/catch_main.cpp).

Usage: catch_names_fit.py WIDTH TEST_EXE...

Catch2 v2 wraps a longer name at its ': ' and, when that break falls past the width, aborts or
loops printing the name forever (catchorg/Catch2#2309): a failing case would hang ctest.
"""
import subprocess
import sys

width = int(sys.argv[1])
# The console reporter indents a name and its "-----" frame; keep a margin for both.
limit = width - 20
bad = []
for exe in sys.argv[2:]:
    # Catch v2 exits with the number of tests listed, so the status says nothing here.
    out = subprocess.run([exe, "--list-test-names-only"], capture_output=True, text=True).stdout
    bad += [f"{exe}: {len(n)} characters: {n}" for n in out.splitlines() if len(n) > limit]
for line in bad:
    print(line)
print(f"{len(bad)} test names longer than {limit} characters (console width {width})")
sys.exit(1 if bad else 0)
