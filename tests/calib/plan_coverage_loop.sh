#!/usr/bin/env bash
# Calibration coverage end to end (issue 34 item 4, "done when"): `fit` on a one-node nccl-tests
# log with a plan whose data-parallel dim crosses nodes lists that dim as not measured and the
# node's tensor-parallel dim as measured; `cost` on a cluster with that calibration says the same
# in its table and JSON; `calibrate --plan-for` on it prints an nccl-tests command for the
# cross-node dim only (split MOD 8: the 8 groups of 2 ranks share each node's NICs).
set -u
autoddl=$1 src=$2
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
plan=(--model gpt --set layers=2,heads=16 --scheme megatron:tp=8,pp=1,dp=2 --nodes 2)

"$autoddl" fit --nccl-tests "$src/tests/calib/data/all_reduce_perf_8xH100.txt" --cluster dgx-h100 \
  --out "$TMP/cal.json" "${plan[@]}" >"$TMP/fit.txt" 2>&1 || { cat "$TMP/fit.txt"; fail "fit --scheme"; }
grep -q "^what the columns mean:" "$TMP/fit.txt" || { cat "$TMP/fit.txt"; fail "fit prints no column legend"; }
grep -Eq "^ +all_reduce +0 +2 +1 +8 nodes .* not measured" "$TMP/fit.txt" \
  || { cat "$TMP/fit.txt"; fail "the cross-node dp dim is not listed as not measured"; }
grep -Eq "^ +all_reduce +1 +8 +8 +1 one node .* measured$" "$TMP/fit.txt" \
  || { cat "$TMP/fit.txt"; fail "the node's tp dim is not listed as measured"; }

"$autoddl" clusters --json "$TMP/presets.json" >/dev/null || fail "clusters --json"
python3 - "$TMP" <<'PY' || fail "cluster file"
import json, sys
d = sys.argv[1]
c = next(p for p in json.load(open(d + "/presets.json")) if p["name"] == "dgx-h100")
c["calibration_file"] = "cal.json"
json.dump(c, open(d + "/cluster.json", "w"))
PY
"$autoddl" cost --model gpt --set layers=2,heads=16 --scheme megatron:tp=8,pp=1,dp=2 --nodes 2 \
  --cluster "$TMP/cluster.json" --json "$TMP/cost.json" >"$TMP/cost.txt" 2>&1 || { cat "$TMP/cost.txt"; fail "cost"; }
grep -q "calibration coverage (cal.json)" "$TMP/cost.txt" || { cat "$TMP/cost.txt"; fail "cost prints no coverage"; }
python3 - "$TMP/cost.json" <<'PY' || fail "cost --json calibration_coverage"
import json, sys
rows = json.load(open(sys.argv[1]))["calibration_coverage"]
by = {(r["mesh_dim"], r["collective"]): r for r in rows}
assert by[(1, "all_reduce")]["source"] == "measured", rows
assert by[(0, "all_reduce")]["source"].startswith("not measured"), rows
assert by[(0, "all_reduce")]["crosses_nodes"] and by[(0, "all_reduce")]["groups_per_node"] == 8, rows
PY

"$autoddl" calibrate --plan-for megatron:tp=8,pp=1,dp=2 --model gpt --set layers=2,heads=16 --nodes 2 \
  --cluster "$TMP/cluster.json" >"$TMP/plan.txt" 2>&1 || { cat "$TMP/plan.txt"; fail "calibrate --plan-for"; }
grep -q '^mpirun -np 16 -N 8 -x "NCCL_TESTS_SPLIT=MOD 8" all_reduce_perf ' "$TMP/plan.txt" \
  || { cat "$TMP/plan.txt"; fail "no split command for the cross-node dp dim"; }
if grep -q "^mpirun -np 8 -N 8 all_reduce_perf" "$TMP/plan.txt"; then
  cat "$TMP/plan.txt"; fail "the measured tp dim is planned again"
fi
echo "ok"
