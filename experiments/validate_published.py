#!/usr/bin/env python3
"""Predicted vs published end-to-end training step times.

Reads published tables kept as data (experiments/published/*.json, format autoddl-published-1:
a source, a cluster preset and rows of model knobs, node count, scheme and the measured step
time or achieved TFLOP/s per GPU), costs every row with `autoddl cost --json`, and prints
predicted against measured with the error, feasibility, and the mean and max |error| per table.

  experiments/validate_published.py [--autoddl build/autoddl] [--json OUT] [--max-mean-error PCT]
                                    [--max-generation-mean-error PCT] [--bands OUT | --check-bands FILE] [FILE...]

With --max-mean-error, exits 1 when a table's mean |error| exceeds PCT or a row is infeasible
(every published configuration trained, so "infeasible" is a model error). A table with
"gate": {"mean_error": false, "why": ...} is held to feasibility only (its error is printed, with
the reason it is not yet held to the bound); "gate": {"mean_error": true, "max_mean_error": PCT,
"why": ...} holds it to its own bound instead of --max-mean-error. With
--max-generation-mean-error, exits 1 when the mean |error| over all rows of one hardware
generation (the tables' "hardware": A100, H100) exceeds PCT, gated tables or not. Bad data files get
one line naming the file, the field and why, and exit 2.

Without FILE it reads published/*.json. Tables under published/diagnostic/ are not in that set:
their model is known to miss by more than the bounds (their "gate" is {"mean_error": false} and
its "why" says where the time goes), so they stay out of the generation mean; name them to run them.

A row may name its own "cluster" (a preset, as the table's) and "gpus_per_node": the GPUs of one
NVLink domain the job ran in, for presets whose node is a whole NVLink domain (gb200-nvl72,
gb300-nvl72: 72 GPUs). The row is then costed on that preset's JSON (costmodel/cluster/presets/)
with gpus_per_node set to N and the NICs per node scaled with it (one per GPU stays one per GPU),
every other constant untouched: a 256-GPU job in 64-GPU Slurm segments of NVL72 racks is
nodes=4, gpus_per_node=64; an 8-GPU job on two compute trays is nodes=1, gpus_per_node=8.

A generation whose every row comes from tables with their own "max_mean_error" (one table, say)
is held to the largest of those bounds instead of --max-generation-mean-error: its mean is then
its tables' mean, which their gates already hold. The last line is the mean over every row.

--bands OUT writes the validation bands (format autoddl-validation-bands-1): per hardware generation
and layout family (dense: tensor/pipeline/data parallel; context: cp > 1; expert: an MoE model,
whatever its ep; as `autoddl cost --json` files the row) the row count, mean and max |error| and how many rows are predicted fast. autoddl compiles
the committed experiments/validation_bands.json in and prints the band beside every
prediction (`cost`, `search`, `simulate`), so the band is measured here, never typed. --check-bands
FILE exits 1 when FILE differs from what this run measures (the ctest that keeps it current). Both
need the default set (no FILE arguments), the set the band claims to describe; both also run the
diagnostic tables and write their bands per hardware and family marked "diagnostic": true (never
in an "all" band, the generation means or the exit status), so a prediction of a kind only those
tables cover prints how far off they are rather than the gated rows' error.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_FILES = sorted(
    os.path.join(HERE, "published", f) for f in os.listdir(os.path.join(HERE, "published")) if f.endswith(".json"))
# Tables kept out of the default set (not gated) until what they miss is modelled. The bands
# still report them, marked diagnostic, so a prediction of their kind says how far off it is
# instead of borrowing the gated rows' error.
DIAGNOSTIC_FILES = sorted(
    os.path.join(HERE, "published", "diagnostic", f)
    for f in os.listdir(os.path.join(HERE, "published", "diagnostic")) if f.endswith(".json"))


def fail(path, field, reason):
    print(f"validate_published: error: {path}: {field}: {reason}", file=sys.stderr)
    sys.exit(2)


BANDS_FORMAT = "autoddl-validation-bands-1"
BANDS_TOLERANCE_PCT = 0.05  # rounding and last-bit differences between builds, not model changes


def family(report):
    """The layout family a row validates, as autoddl files the costed scheme (cli/validation_band.cpp:
    dense, context or expert), so the band a prediction prints is the one its own kind of row measured."""
    return report.get("validation_band", {}).get("family", "dense")


def bands(results):
    """Per (hardware, family) and per (hardware, "all") over the default set, and per (hardware, family)
    over the diagnostic tables, marked: rows, mean/max |error|, mean signed error, rows fast."""
    groups = {}
    for r in results:
        diagnostic = r.get("diagnostic", False)
        for fam in (r["family"],) if diagnostic else (r["family"], "all"):
            groups.setdefault((r["hardware"], fam, diagnostic), []).append(r["error_pct"])
    out = []
    for (hw, fam, diagnostic), errs in sorted(groups.items()):
        band = {"hardware": hw, "family": fam, "rows": len(errs),
                "mean_abs_error_pct": round(sum(abs(e) for e in errs) / len(errs), 2),
                "max_abs_error_pct": round(max(abs(e) for e in errs), 2),
                "mean_error_pct": round(sum(errs) / len(errs), 2),
                "fast_rows": sum(1 for e in errs if e < 0)}
        if diagnostic:
            band["diagnostic"] = True
        out.append(band)
    return {"format": BANDS_FORMAT,
            "source": "experiments/validate_published.py --bands over experiments/published/*.json (the default set) "
                      "and, marked diagnostic and kept out of every \"all\" band, experiments/published/diagnostic/*.json; "
                      "error = (predicted - measured) / measured, so negative is fast",
            "bands": out}


def check_bands(path, measured):
    try:
        with open(path) as f:
            committed = json.load(f)
    except (OSError, ValueError) as e:
        fail(path, "", str(e))
    key = lambda b: (b["hardware"], b["family"], b.get("diagnostic", False))
    old = {key(b): b for b in committed.get("bands", [])}
    new = {key(b): b for b in measured["bands"]}
    stale = sorted(set(old) ^ set(new))
    for k in set(old) & set(new):
        a, b = old[k], new[k]
        if a["rows"] != b["rows"] or a["fast_rows"] != b["fast_rows"] or any(
                abs(a[f] - b[f]) > BANDS_TOLERANCE_PCT for f in ("mean_abs_error_pct", "max_abs_error_pct", "mean_error_pct")):
            stale.append(k)
    for hw, fam, diagnostic in sorted(stale):
        k = (hw, fam, diagnostic)
        print(f"validate_published: {path}: band {hw}/{fam}{' (diagnostic)' if diagnostic else ''} is stale: "
              f"committed {old.get(k)}, measured {new.get(k)}", file=sys.stderr)
    if stale:
        print(f"validate_published: rerun `experiments/validate_published.py --bands {path}` and commit it", file=sys.stderr)
    return not stale


def megatron_flops(knobs):
    """Narayanan et al. SC'21 eq. 3: FLOPs per iteration with activation recomputation."""
    k = dict(kv.split("=") for kv in knobs.split(","))
    B, s, l, h, V = (float(k[x]) for x in ("batch", "seq", "layers", "hidden", "vocab"))
    return 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h))


def load(path):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        fail(path, "", str(e))
    if doc.get("format") != "autoddl-published-1":
        fail(path, "format", "must be autoddl-published-1")
    for key in ("title", "source", "cluster", "rows"):
        if key not in doc:
            fail(path, key, "missing")
    for i, row in enumerate(doc["rows"]):
        for key in ("name", "knobs", "nodes", "scheme"):
            if key not in row:
                fail(path, f"rows[{i}].{key}", "missing")
        if "gpus_per_node" in row and row.get("cluster", doc["cluster"]).endswith(".json"):
            fail(path, f"rows[{i}].gpus_per_node", "cuts a preset's node, not a cluster file's")
        measures = [k for k in ("measured_iteration_s", "measured_tflops_per_gpu", "measured_tokens_per_s_per_gpu") if k in row]
        if len(measures) != 1:
            fail(path, f"rows[{i}]", "needs exactly one of measured_iteration_s, measured_tflops_per_gpu, "
                 "measured_tokens_per_s_per_gpu")
        if "measured_tokens_per_s_per_gpu" in row and "seq" not in row:
            fail(path, f"rows[{i}].seq", "missing (tokens per step = batch x seq)")
    gate = doc.get("gate", {"mean_error": True})
    own = gate.get("max_mean_error") if isinstance(gate, dict) else None
    if not isinstance(gate, dict) or not isinstance(gate.get("mean_error"), bool) or (not gate["mean_error"] and not gate.get("why")) \
            or (own is not None and (not gate["mean_error"] or not isinstance(own, (int, float)) or own <= 0 or not gate.get("why"))):
        fail(path, "gate", 'must be {"mean_error": true}, {"mean_error": true, "max_mean_error": PCT, "why": "..."} '
             'or {"mean_error": false, "why": "..."}')
    return doc


def measured_s(row, gpus):
    if "measured_iteration_s" in row:
        return float(row["measured_iteration_s"])
    if "measured_tokens_per_s_per_gpu" in row:
        k = dict(kv.split("=") for kv in row["knobs"].split(","))
        return float(k["batch"]) * float(row["seq"]) / (float(row["measured_tokens_per_s_per_gpu"]) * gpus)
    return megatron_flops(row["knobs"]) / (float(row["measured_tflops_per_gpu"]) * 1e12 * gpus)


PRESETS = os.path.join(HERE, "..", "costmodel", "cluster", "presets")


def domain_cluster(path, cluster, row, tmp):
    """The preset `cluster` with its node cut to the row's NVLink domain of gpus_per_node GPUs
    (see the module doc), written under tmp; its path. Nothing but the node size and the NICs
    that come with it changes."""
    n = row["gpus_per_node"]
    if not isinstance(n, int) or n < 1:
        fail(path, f"{row['name']}: gpus_per_node", "must be a positive integer")
    try:
        with open(os.path.join(PRESETS, cluster + ".json")) as f:
            spec = json.load(f)
    except (OSError, ValueError) as e:
        fail(path, f"{row['name']}: gpus_per_node", f"needs a preset under costmodel/cluster/presets/: {e}")
    full = spec["gpus_per_node"]["value"]
    if n > full:
        fail(path, f"{row['name']}: gpus_per_node", f"{n} is more than {cluster}'s {full} GPUs per node")
    nics = spec["inter"]["nics_per_node"]["value"]
    if (nics * n) % full:
        fail(path, f"{row['name']}: gpus_per_node", f"{n} GPUs do not take a whole share of {cluster}'s {nics} NICs")
    spec["name"] = f"{cluster}-domain{n}"
    spec["gpus_per_node"] = {"value": n, "source": f"{cluster} with one NVLink domain cut to the {n} GPUs the "
                             f"published job ran in (validate_published.py, the row's gpus_per_node)"}
    spec["inter"]["nics_per_node"] = {"value": nics * n // full, "source": f"{cluster}'s NICs per GPU on {n} GPUs"}
    out = os.path.join(tmp, f"{cluster}-domain{n}.json")
    with open(out, "w") as f:
        json.dump(spec, f)
    return out


def cost(autoddl, cluster, row):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        if "gpus_per_node" in row:
            cluster = domain_cluster(row.get("_path", ""), cluster, row, tmp)
        cmd = [autoddl, "cost", "--model", row.get("model", "gpt"), "--set", row["knobs"], "--cluster", cluster,
               "--nodes", str(row["nodes"]), "--scheme", row["scheme"], "--json", out]
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            return None, p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}"
        with open(out) as f:
            return json.load(f), ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", default=DEFAULT_FILES)
    ap.add_argument("--autoddl", default=os.path.join(HERE, "..", "build", "autoddl"))
    ap.add_argument("--json", help="write every row (predicted, measured, error) here")
    ap.add_argument("--max-mean-error", type=float, help="exit 1 past this mean |error| (%%) or on an infeasible row")
    ap.add_argument("--max-generation-mean-error", type=float,
                    help="exit 1 past this mean |error| (%%) over all rows of one hardware generation")
    ap.add_argument("--bands", help="write the validation bands per hardware and layout family here")
    ap.add_argument("--check-bands", help="exit 1 when this bands file differs from what this run measures")
    args = ap.parse_args()
    if (args.bands or args.check_bands) and args.files != DEFAULT_FILES:
        fail("--bands" if args.bands else "--check-bands", "FILE", "the bands describe the default set; name no FILE")
    if not os.access(args.autoddl, os.X_OK):
        fail(args.autoddl, "--autoddl", "not an executable (build first: scripts/test or scripts/demo)")

    results, ok = [], True
    by_generation = {}
    with_bands = bool(args.bands or args.check_bands)
    own_bounds = {}  # generation -> the own bounds of its tables (None: a table without one)
    for path in args.files + (DIAGNOSTIC_FILES if with_bands else []):
        diagnostic = path in DIAGNOSTIC_FILES
        doc = load(path)
        print(f"{doc['title']}\n  source: {doc['source']}" + (f"\n  notes: {doc['notes']}" if doc.get("notes") else ""))
        print(f"  {'row':<20} {'predicted':>11} {'measured':>11} {'error':>8}  feasible  memory")
        errors = []
        for row in doc["rows"]:
            report, why = cost(args.autoddl, row.get("cluster", doc["cluster"]), dict(row, _path=path))
            if report is None:
                print(f"  {row['name']:<20} {'-':>11} {'':>11} {'':>8}  error: {why}")
                ok = False
                continue
            gpus = report["devices"]
            meas = measured_s(row, gpus)
            pred = report["iteration_s"]
            err = 100.0 * (pred - meas) / meas
            errors.append(abs(err))
            if not diagnostic:
                by_generation.setdefault(doc.get("hardware", "?"), []).append(abs(err))
            feasible = bool(report["feasible"])
            ok = ok and (feasible or diagnostic)
            print(f"  {row['name']:<20} {pred:>10.3f}s {meas:>10.3f}s {err:>+7.1f}%  {'yes' if feasible else 'NO':<8}"
                  f"  {report['peak_memory_bytes'] / 1e9:.1f} GB")
            results.append({"table": doc["title"], "hardware": report.get("validation_band", {}).get("hardware", doc.get("hardware", "?")),
                            "family": family(report),
                            "row": row["name"], "scheme": row["scheme"], "predicted_s": pred,
                            "measured_s": meas, "error_pct": err, "feasible": feasible,
                            "peak_memory_bytes": report["peak_memory_bytes"], "diagnostic": diagnostic})
        if errors:
            mean = sum(errors) / len(errors)
            gate = doc.get("gate", {"mean_error": True})
            if not diagnostic:
                own_bounds.setdefault(doc.get("hardware", "?"), []).append(gate.get("max_mean_error"))
            gated = gate["mean_error"]
            bound = gate.get("max_mean_error", args.max_mean_error)
            note = "" if gated else f"; not held to --max-mean-error: {gate['why']}"
            if gated and "max_mean_error" in gate:
                note = f"; held to its own bound, {bound:g}%: {gate['why']}"
            print(f"  mean |error| {mean:.1f}%, max {max(errors):.1f}% ({doc.get('hardware', '')})" + note + "\n")
            if not diagnostic and gated and args.max_mean_error is not None and bound is not None and mean > bound:
                ok = False
    for gen, errs in sorted(by_generation.items()):
        mean = sum(errs) / len(errs)
        bounds = own_bounds.get(gen, [None])
        bound, note = args.max_generation_mean_error, ""
        if bounds and all(b is not None for b in bounds):
            bound = max(bounds)
            note = f" (held to its tables' own bound, {bound:g}%)"
        print(f"{gen}: {len(errs)} rows, mean |error| {mean:.1f}%, max {max(errs):.1f}%{note}")
        if args.max_generation_mean_error is not None and bound is not None and mean > bound:
            ok = False
    every = [e for errs in by_generation.values() for e in errs]
    if every:
        print(f"all generations: {len(every)} rows, mean |error| {sum(every) / len(every):.1f}%, max {max(every):.1f}%")
    if args.json:
        tmp = args.json + f".tmp.{os.getpid()}"
        with open(tmp, "w") as f:
            json.dump(results, f, indent=2)
        os.replace(tmp, args.json)
    if args.bands:
        tmp = args.bands + f".tmp.{os.getpid()}"
        with open(tmp, "w") as f:
            json.dump(bands(results), f, indent=2)
            f.write("\n")
        os.replace(tmp, args.bands)
    if args.check_bands and not check_bands(args.check_bands, bands(results)):
        sys.exit(1)
    if (args.max_mean_error is not None or args.max_generation_mean_error is not None) and not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
