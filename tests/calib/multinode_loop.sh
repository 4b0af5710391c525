#!/usr/bin/env bash
# The multi-node calibration loop without a GPU (issue 16, "done when"): `autoddl calibrate
# --launcher` with the replaying srun (tests/calib/replay/srun, recordings for 4 x 8 H100 in
# tests/calib/data/multinode/), then `autoddl fit`, then `autoddl cost` on a 4 x 8 H100 cluster
# that points at the fitted calibration. Checks that both mesh dims of a 4x8 mesh, the 8 GPUs
# of a node and the 4 nodes with all 8 groups sharing the NICs, are priced from the measured
# entries (to the value the calibration holds), that NCCL's algorithm/protocol (the replayed NCCL
# debug logs) reach the measurement files, and that 8 nodes, never measured, are priced by NCCL's
# model with the fitted inter-node NCCL-model tier.
set -u
autoddl=$1 src=$2
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$autoddl" calibrate --launcher "$src/tests/calib/replay/srun -N4 --ntasks-per-node=8 --gpus-per-task=1" \
  --bin-dir "$TMP/bin" --out "$TMP/cal" \
  --only hbm_copy gemm_cublaslt nccl_all_reduce nccl_all_gather nccl_reduce_scatter >"$TMP/calibrate.txt" 2>&1 \
  || { cat "$TMP/calibrate.txt"; fail "calibrate --launcher"; }
grep -q "^calibrate: 4 nodes x 8 GPUs" "$TMP/calibrate.txt" || { cat "$TMP/calibrate.txt"; fail "world not read from the launcher"; }
runs=$(grep -c ": .* ok (" "$TMP/calibrate.txt")
[ "$runs" = 30 ] || { cat "$TMP/calibrate.txt"; fail "want 30 runs ok (gpu_info, hbm, gemm, 3 x 9 group shapes), got $runs"; }

grep -q "nccl_all_reduce_g32_pn8_c1: .* ok (.*NCCL algorithm/protocol for [1-9][0-9]* rows)" "$TMP/calibrate.txt" \
  || { cat "$TMP/calibrate.txt"; fail "NCCL's algorithm/protocol not attached"; }
python3 - "$TMP" <<'PY' || fail "NCCL's choices not in the measurement files"
import json, sys
m = json.load(open(sys.argv[1] + "/cal/nccl_all_gather_g4_pn1_c8.json"))
assert m["nccl"]["version"] == "2.30.7+cuda13.0", m["nccl"]
assert m["nccl"]["communicators"] == [{"ranks": 4, "nodes": 4, "local_ranks": 1}], m["nccl"]
rows = {r["size_bytes"]: r for r in m["rows"]}
assert (rows[1 << 30]["nccl_algo"], rows[1 << 30]["nccl_proto"], rows[1 << 30]["nccl_channels"]) == ("pat", "Simple", 32)
assert (rows[4096]["nccl_algo"], rows[4096]["nccl_proto"]) == ("ring", "LL")
assert "nccl_algo" not in rows[8]  # 2 B per rank: nccl-tests rounds it, NCCL never logs it
PY

"$autoddl" fit --measurements "$TMP"/cal/*.json --cluster dgx-h100 --peak bf16=989e12 --out "$TMP/calibration.json" >"$TMP/fit.txt" 2>&1 \
  || { cat "$TMP/fit.txt"; fail "fit"; }
grep -q "^nccl model per_node" "$TMP/fit.txt" \
  || { cat "$TMP/fit.txt"; fail "no NCCL-model tiers"; }
[ "$(grep -c "held out" "$TMP/fit.txt")" -ge 40 ] || { cat "$TMP/fit.txt"; fail "no held-out error per shape for both fits"; }
grep -q "^intra-node " "$TMP/fit.txt" && grep -q "^inter-node " "$TMP/fit.txt" || { cat "$TMP/fit.txt"; fail "no link tiers"; }
grep -q "held out all_reduce over 4 ranks, 1 per node, 8 groups per node" "$TMP/fit.txt" \
  || { cat "$TMP/fit.txt"; fail "no held-out error per group shape"; }

"$autoddl" clusters --json "$TMP/presets.json" >/dev/null || fail "clusters --json"
python3 - "$TMP" <<'PY' || fail "cluster file"
import json, sys
tmp = sys.argv[1]
c = next(p for p in json.load(open(tmp + "/presets.json")) if p["name"] == "dgx-h100")
c["name"], c["nodes"], c["calibration_file"] = "h100-4x8-calibrated", 4, "calibration.json"
json.dump(c, open(tmp + "/cluster.json", "w"))
PY

"$autoddl" cost --model gpt --cluster "$TMP/cluster.json" --mesh 4x8 --scheme megatron:tp=8,pp=1,dp=4 \
  --json "$TMP/cost.json" >"$TMP/cost.txt" 2>&1 || { cat "$TMP/cost.txt"; fail "cost"; }
"$autoddl" cost --model gpt --cluster "$TMP/cluster.json" --nodes 8 --mesh 8x8 --scheme megatron:tp=8,pp=1,dp=8 \
  --json "$TMP/cost8.json" >"$TMP/cost8.txt" 2>&1 || { cat "$TMP/cost8.txt"; fail "cost on 8 nodes"; }
python3 - "$TMP" <<'PY' || { cat "$TMP/cost.txt" "$TMP/cost8.txt"; fail "calibrated numbers not used"; }
import json, sys
tmp = sys.argv[1]
cal = json.load(open(tmp + "/calibration.json"))
def measured(ranks, per_node, groups):
    e = next(e for e in cal["collectives"] if e["kind"] == "all_reduce" and e["ranks"] == ranks
             and e["ranks_per_node"] == per_node and e.get("groups_per_node", 1) == groups)
    return {int(b): t for b, t in e["measured"]}[1 << 30]
dims = json.load(open(tmp + "/cost.json"))["mesh_dims"]
assert [(d["size"], d["ranks_per_node"], d["groups_per_node"], d["source"]) for d in dims] == \
    [(4, 1, 8, "measured"), (8, 8, 1, "measured")], dims
for d in dims:
    want = measured(d["size"], d["ranks_per_node"], d["groups_per_node"])
    assert abs(d["all_reduce_1GiB_s"] - want) <= 1e-9 * want, (d, want)
dims8 = json.load(open(tmp + "/cost8.json"))["mesh_dims"]
assert [(d["size"], d["source"]) for d in dims8] == [(8, "nccl-model fit"), (8, "measured")], dims8
tier = next(t for t in cal["nccl_model"]["tiers"]
            if t["tier"] == "inter_node" and (t["ranks_per_node"], t["groups_per_node"]) == (1, 8))
assert tier["shapes"] == 6 and tier["attributed_points"] > 0, tier
assert dims8[0]["all_reduce_1GiB_s"] > 0, dims8
PY
grep -q "measured" "$TMP/cost.txt" || fail "cost does not say where the dims' times come from"
echo "ok: calibrate --launcher -> fit -> cost uses the measured intra-node and shared inter-node entries and the fitted NCCL model"
