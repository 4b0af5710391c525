#!/usr/bin/python3
"""The model version of a source tree: 12 hex digits of the SHA-256 over "<path> <sha256>\\n" of
every .cpp/.hpp/.h/.in/.json file under the paths cmake/model_sources.txt names (hidden files left
out, sorted by path). experiments/cmake/write_version.cmake compiles the same hash into autoddl
(`autoddl --version`), and every sweep row records it: `scripts/figures --check` compares a
figure's cells with the tree's hash. Prints it when run: model_version.py [REPO]"""
import hashlib
import os
import sys

EXTENSIONS = (".cpp", ".hpp", ".h", ".in", ".json")


def model_files(root):
    """The tree's model source files, as sorted paths relative to root."""
    entries = []
    with open(os.path.join(root, "cmake", "model_sources.txt")) as fh:
        entries = [line.strip() for line in fh if line.strip() and not line.startswith("#")]
    files = set()
    for e in entries:
        full = os.path.join(root, e)
        if os.path.isdir(full):
            for d, dirs, names in os.walk(full):
                dirs[:] = [x for x in dirs if not x.startswith(".")]
                for n in names:
                    files.add(os.path.relpath(os.path.join(d, n), root).replace(os.sep, "/"))
        elif os.path.exists(full):
            files.add(e)
    return sorted(f for f in files if f.endswith(EXTENSIONS) and not any(p.startswith(".") for p in f.split("/")))


def model_version(root):
    lines = ""
    for f in model_files(root):
        with open(os.path.join(root, f), "rb") as fh:
            lines += f"{f} {hashlib.sha256(fh.read()).hexdigest()}\n"
    return hashlib.sha256(lines.encode()).hexdigest()[:12]


if __name__ == "__main__":
    print(model_version(sys.argv[1] if len(sys.argv) > 1 else
                        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
