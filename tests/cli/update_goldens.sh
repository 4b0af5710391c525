#!/usr/bin/env bash
# Regenerates expected.out / expected.rc of every golden CLI case. Review the diff like code.
set -u
bin=${1:-build/autoddl}
here=$(cd "$(dirname "$0")" && pwd)
for dir in "$here"/*/; do
  [ -f "$dir/cmd" ] || continue
  TMP=$(mktemp -d); export TMP
  args=$(eval echo "$(cat "$dir/cmd")")
  # shellcheck disable=SC2086
  "$bin" $args >"$dir/expected.out" 2>&1; echo $? >"$dir/expected.rc"
  rm -rf "$TMP"
done
