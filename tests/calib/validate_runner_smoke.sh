#!/usr/bin/env bash
# validate_runner end to end on this machine: autoddl writes a plan, the runner runs it, autoddl
# reads the result back. Without a GPU the runner must print one line, exit 2 and write a
# skipped result that autoddl refuses by name; with a GPU the result must compare (exit 0).
set -u
autoddl=$1 runner=$2
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
args="--model gpt --set layers=1,hidden=128,heads=4,seq=64,vocab=512,batch=4 --cluster dgx-h100 --nodes 1 --mesh 1 --scheme dp"
# shellcheck disable=SC2086
"$autoddl" validate $args --plan-out "$TMP/plan.json" --iters 1 --warmup 0 >/dev/null 2>&1
[ -s "$TMP/plan.json" ] || { echo "no plan written"; exit 1; }
"$runner" --plan "$TMP/plan.json" --out "$TMP/m.json" -n 3 -w 1 --quiet >"$TMP/out.txt" 2>&1; rc=$?
case $rc in
  0)
    # shellcheck disable=SC2086
    "$autoddl" validate $args --measured "$TMP/m.json" >"$TMP/cmp.txt" 2>&1 || { cat "$TMP/cmp.txt"; exit 1; }
    grep -q "iteration (slowest rank, median)" "$TMP/cmp.txt" ;;
  2)
    if [ "$(wc -l <"$TMP/out.txt")" != 1 ] || ! grep -q '^validate_runner: skipped: ' "$TMP/out.txt"; then
      echo "want one 'validate_runner: skipped:' line, got:"; cat "$TMP/out.txt"; exit 1
    fi
    # shellcheck disable=SC2086
    out=$("$autoddl" validate $args --measured "$TMP/m.json" 2>&1); got=$?
    if [ $got != 2 ] || [[ "$out" != *"m.json: skipped: the runner measured nothing: "* ]]; then
      echo "autoddl on a skipped result (exit $got): $out"; exit 1
    fi ;;
  *) echo "validate_runner exit $rc:"; cat "$TMP/out.txt"; exit 1 ;;
esac
