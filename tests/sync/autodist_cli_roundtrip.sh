#!/usr/bin/env bash
# Issue 32 item 5 end to end through the CLI: `sync export --autodist` writes builders' strategies
# (text, JSON, binary, on hosts a resource spec names) and a search report's run; a record set in
# AutoSync's layout around them goes through `sync dataset import --autodist`, whose records carry
# the exported strategies unchanged and the runtimes given; `sync train` and `sync eval` run on them.
set -eu
bin=$1
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
in=$TMP/runs; mkdir -p "$in/strategies" "$in/runtime" "$in/resource_spec"
cat >"$TMP/spec.yml" <<'YML'
nodes:
  - address: 10.0.0.1
    gpus: [0, 1, 2, 3]
    chief: true
  - address: 10.0.0.2
    gpus: [0, 1, 2, 3]
  - address: 10.0.0.3
    gpus: [0, 1, 2, 3]
  - address: 10.0.0.4
    gpus: [0, 1, 2, 3]
YML
model=(--model mlp --cluster autosync-b)
forms=(text json binary)
i=0
for b in ps ps_lb partitioned_ps uneven_partitioned_ps all_reduce partitioned_ar parallax horovod ddp horovod-fp16 ddp-fp16; do
  "$bin" sync build "${model[@]}" --builder "$b" --out "$TMP/$b.json" >/dev/null
  "$bin" sync export "${model[@]}" --strategy "$TMP/$b.json" --autodist --format "${forms[$((i % 3))]}" \
    --resource-spec "$TMP/spec.yml" --out "$in/strategies/run$i" >/dev/null
  printf 'runtime: [0.0%d1, 0.0%d3]\n' $((i + 1)) $((i + 1)) >"$in/runtime/run$i.yml"
  cp "$TMP/spec.yml" "$in/resource_spec/run$i.yml"
  echo "run$i $b" >>"$TMP/expected"
  i=$((i + 1))
done
# A run of a search report, on the default hosts (no resource spec of its own: --resource-spec below).
if "$bin" sync search "${model[@]}" --trials 4 --per-round 2 --explore 20 --repeats 1 --json "$TMP/report.json" \
    >"$TMP/search.log" 2>&1; then
  "$bin" sync export "${model[@]}" --strategy "$TMP/report.json" --run 12 --autodist --format json \
    --out "$in/strategies/run_search.json" >/dev/null
  echo 'average: 0.05' >"$in/runtime/run_search"
  echo "run_search report:12" >>"$TMP/expected"
elif ! grep -q "built without the simulator" "$TMP/search.log"; then
  cat "$TMP/search.log"; exit 1
fi
"$bin" sync export "${model[@]}" --builder ps --autodist --resource-spec-out "$TMP/default_spec.yml" --out /dev/null >/dev/null
"$bin" sync dataset import --autodist "$in" "${model[@]}" --resource-spec "$TMP/default_spec.yml" --out "$TMP/ds"
python3 - "$TMP" <<'PY'
import json, sys
tmp = sys.argv[1]
records = {r["autodist_id"]: r for r in map(json.loads, open(f"{tmp}/ds/records.jsonl"))}
expected = dict(line.split() for line in open(f"{tmp}/expected"))
if sorted(records) != sorted(expected):
    sys.exit(f"records {sorted(records)}, expected {sorted(expected)}")
for run, source in expected.items():
    if source.startswith("report:"):
        # The run's compact strategy (strategy_compact.hpp) against the imported one, less what
        # AutoDist cannot say: tree/hierarchical read back as auto, `uneven` is implied by the shape.
        report = json.load(open(f"{tmp}/report.json"))
        n = int(source.split(":")[1])
        table = report["strategies"]
        want = table["list"][report["runs"][n]["strategy"]]["vars"]
        def part(p):
            if p["type"] == "ps":
                return f"ps:{p['server']}" + (":lr" if p["local_replication"] else "") + ("" if p["sync"] else ":async")
            return f"ar:{p['group']}" + (":fp16" if p["compressor"] == "fp16" else "") + \
                (":ring" if p["algorithm"] == "ring" else "")
        def lossless(v):
            if isinstance(v, str):
                return v.replace(":tree", "").replace(":hierarchical", "")
            return {"axis": v["axis"], "shards": v["shards"], "parts": [lossless(p) for p in v["parts"]]}
        got = {}
        for v in records[run]["strategy"]["vars"]:
            parts = [part(p) for p in v["parts"]]
            got[v["name"]] = parts[0] if "partition" not in v else \
                {"axis": v["partition"]["axis"], "shards": v["partition"]["shards"], "parts": parts}
        if [got.get(name) for name in table["variables"]] != [lossless(v) for v in want]:
            sys.exit(f"{run}: imported strategy differs from the report's run {n}")
        continue
    want = json.load(open(f"{tmp}/{source}.json"))["vars"]
    if records[run]["strategy"]["vars"] != want:
        sys.exit(f"{run} ({source}): imported strategy differs from the exported one")
    k = int(run[3:]) + 1
    if records[run]["runtimes_s"] != [float(f"0.0{k}1"), float(f"0.0{k}3")]:
        sys.exit(f"{run}: runtimes {records[run]['runtimes_s']}")
print(f"{len(records)} records carry their exported strategies and runtimes")
PY
"$bin" sync train --data "$TMP/ds" --out "$TMP/ranker.model" >/dev/null
"$bin" sync eval --data "$TMP/ds" --model-file "$TMP/ranker.model" >/dev/null
echo "export -> import -> train -> eval: ok"
