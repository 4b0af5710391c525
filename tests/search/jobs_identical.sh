#!/usr/bin/env bash
# `autoddl search --jobs 2` writes the same JSON as `--jobs 1` (every field but the measured
# seconds): the threads' results are combined in a fixed order. A 4-layer GPT on 16 A100, the
# default methods (cd, cd-nbh, cd-expert and the baselines: seeds, sync probes, expert starts).
set -eu
bin=$1
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
# Also cd-mesh on an MLP: its per-mesh contexts report progress through the parent's (the CLI
# always sets a progress callback), which must not deadlock.
run() {  # tag, then the search arguments
  local tag=$1; shift
  for j in 1 2; do
    timeout 300 "$bin" search "$@" --jobs $j --json "$TMP/$tag$j.json" >/dev/null 2>&1 ||
      { echo "$tag --jobs $j: exit $?"; exit 1; }
  done
}
run gpt --model gpt --set layers=4 --cluster dgx-a100 --nodes 2
run mlp --model mlp --cluster dgx-a100 --nodes 1 --method cd-mesh
for tag in gpt mlp; do
python3 - "$TMP/${tag}1.json" "$TMP/${tag}2.json" <<'PY'
import json, sys
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k not in ("seconds", "search_s")}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x
a, b = (strip(json.load(open(p))) for p in sys.argv[1:3])
if not a["results"] or a["results"][0]["iteration_s"] is None:
    sys.exit("no feasible result to compare")
if a != b:
    sys.exit("--jobs 1 and --jobs 2 differ")
print("identical:", len(a["results"]), "results")
PY
done
