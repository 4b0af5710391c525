#!/usr/bin/env bash
# Runs one golden CLI case (tesh-like). A case folder holds:
#   cmd          the arguments to autoddl, one line (word-split by bash; $TMP is a scratch dir)
#   expected.rc  the exit code
#   expected.out stdout and stderr together, matched exactly
#   absent       optional: paths (one a line, $TMP expanded) that must not exist afterwards
# Run `tests/cli/update_goldens.sh build/autoddl` to regenerate every expected.* after review.
set -u
bin=$1 dir=$2
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
export TMP
args=$(eval echo "$(cat "$dir/cmd")")
# shellcheck disable=SC2086
out=$("$bin" $args 2>&1); rc=$?
want_rc=$(cat "$dir/expected.rc")
ok=1
if [ "$rc" != "$want_rc" ]; then echo "exit code $rc, expected $want_rc"; ok=0; fi
if [ "$out" != "$(cat "$dir/expected.out")" ]; then
  echo "output differs:"; diff <(cat "$dir/expected.out") <(printf '%s\n' "$out"); ok=0
fi
if [ -f "$dir/absent" ]; then
  while read -r line; do
    p=$(eval echo "$line")
    if [ -e "$p" ] || compgen -G "$p.tmp.*" >/dev/null; then echo "$p was written"; ok=0; fi
  done <"$dir/absent"
fi
[ $ok = 1 ]
